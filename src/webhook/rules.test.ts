// The webhook's decisions on FailoverSegment/HaHost/Notification writes, over
// the in-memory repository: Masakari's messages for taken names, in-use
// segments and hosts, unknown compute hosts; Nova failures fail closed;
// metadata-only edits, deletions in progress and the operator's own writes
// (its user name with its field manager, never a field manager alone) pass.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { admittedConditions } from '../testing/admitted.ts';
import { pino } from 'pino';
import { API_VERSION, FIELD_MANAGERS, GROUP, VERSION } from '../model/constants.ts';
import type { FailoverSegment, HaHost, MasakariObject, Notification } from '../model/types.ts';
import { MemoryRepository } from '../domain/testing/memory-repository.ts';
import { HaService } from '../domain/ha-service.ts';
import type { ComputeHostChecker } from '../domain/compute-host-checker.ts';
import { UnexpectedApiError } from '../domain/errors.ts';
import { MASAKARI_VALIDATORS } from '../domain/spec-validators.ts';
import type { SegmentRecord } from '../domain/records.ts';
import { AdmissionRules } from './rules.ts';
import type { TrustPolicy } from './rules.ts';
import type { AdmissionRequest, Operation, Verdict } from './review.ts';

const KNOWN = new Set(['compute-1', 'compute-2', 'compute-3']);
/** The api pod's service account: the identity the operator's writes carry. */
const OPERATOR = 'system:serviceaccount:masakari:masakari-operator-api';
const OPERATOR_TRUST: TrustPolicy = { fieldManagers: Object.values(FIELD_MANAGERS), operatorUsers: [OPERATOR] };
const nova: ComputeHostChecker = { exists: async (name) => KNOWN.has(name) };

function fixture(
  o: { compute?: ComputeHostChecker | null; trust?: TrustPolicy; novaTimeoutMs?: number; now?: Date } = {},
) {
  const repo = new MemoryRepository();
  const service = new HaService(repo, nova, { osapi_max_limit: 1000, duplicate_notification_detection_interval: 180 });
  const rules = new AdmissionRules({
    repo,
    segmentExists: async (name) => name === 'pending-segment',
    underRecovery: (uuid) => service.isUnderRecovery(uuid),
    compute: o.compute === null ? undefined : (o.compute ?? nova),
    validators: MASAKARI_VALIDATORS,
    trust: o.trust ?? OPERATOR_TRUST,
    novaTimeoutMs: o.novaTimeoutMs ?? 1000,
    ...(o.now ? { freshness: { expiredIntervalS: 86_400, now: () => o.now! } } : {}),
    log: pino({ level: 'silent' }),
  });
  return { repo, service, rules };
}

/** Segment `s` holding the admitted host compute-1. */
async function withComputeHost(
  { repo, service }: ReturnType<typeof fixture>,
  o: { on_maintenance?: boolean } = {},
): Promise<SegmentRecord> {
  const s = await repo.createSegment({
    name: 's',
    service_type: 'C',
    recovery_method: 'auto',
    description: null,
    enabled: true,
  });
  await service.createHost(s.uuid, { host: { name: 'compute-1', type: 'COMPUTE', control_attributes: 'SSH', ...o } });
  return s;
}

const plural = { FailoverSegment: 'failoversegments', HaHost: 'hahosts', Notification: 'notifications' } as const;

function request(
  operation: Operation,
  object: MasakariObject | undefined,
  oldObject?: MasakariObject,
  extra: Partial<AdmissionRequest> = {},
): AdmissionRequest {
  const kind = (object ?? oldObject)!.kind as keyof typeof plural;
  return {
    uid: 'req-1',
    kind: { group: GROUP, version: VERSION, kind },
    resource: { group: GROUP, version: VERSION, resource: plural[kind] },
    name: (object ?? oldObject)!.metadata.name,
    namespace: 'ns',
    operation,
    userInfo: { username: 'alice' },
    object,
    oldObject,
    options: { fieldManager: 'kubectl' },
    ...extra,
  };
}

const segment = (name: string, masakariName: string, status?: FailoverSegment['status']): FailoverSegment => ({
  apiVersion: API_VERSION,
  kind: 'FailoverSegment',
  metadata: { name, generation: 1 },
  spec: { name: masakariName, recoveryMethod: 'auto', serviceType: 'COMPUTE', enabled: true },
  ...(status ? { status } : {}),
});

const host = (name: string, hostName: string, seg: string, status?: HaHost['status']): HaHost => ({
  apiVersion: API_VERSION,
  kind: 'HaHost',
  metadata: { name, generation: 1 },
  spec: { name: hostName, segmentRef: { name: seg }, type: 'COMPUTE', controlAttributes: 'SSH' },
  ...(status ? { status } : {}),
});

const notification = (hostname: string): Notification => ({
  apiVersion: API_VERSION,
  kind: 'Notification',
  metadata: { name: `${hostname}-n` },
  spec: {
    type: 'PROCESS',
    hostname,
    generatedTime: '2026-01-01T00:00:00Z',
    payload: { process_name: 'nova-compute', event: 'STOPPED' },
  },
});

const ready = { conditions: admittedConditions() };

function denied(v: Verdict, code: number, message: string): void {
  assert.is(v.allowed, false, 'expected a denial');
  if (v.allowed) return;
  assert.is(v.message, message);
  assert.is(v.code, code);
}

/** A segment with one host that has a notification in `new` (Masakari: "in use"). */
async function inUse() {
  const f = fixture();
  const s = await f.repo.createSegment({
    name: 'busy',
    service_type: 'COMPUTE',
    recovery_method: 'auto',
    description: null,
    enabled: true,
  });
  const h = await f.service.createHost(s.uuid, {
    host: { name: 'compute-1', type: 'COMPUTE', control_attributes: 'SSH' },
  });
  await f.service.createNotification({
    notification: {
      type: 'PROCESS',
      hostname: 'compute-1',
      generated_time: '2026-01-01T00:00:00',
      payload: { process_name: 'nova-compute', event: 'STOPPED' },
    },
  });
  const segObj = segment(s.k8sName, 'busy', { uuid: s.uuid, id: s.id, ...ready });
  const hostObj = host(h.k8sName, 'compute-1', s.k8sName, { uuid: h.uuid, id: h.id, segmentUuid: s.uuid, ...ready });
  return { ...f, s, h, segObj, hostObj };
}

test('a second segment with a taken name is denied with Masakari’s 409 message', async () => {
  const { repo, rules } = fixture();
  await repo.createSegment({
    name: 'seg',
    service_type: 'C',
    recovery_method: 'auto',
    description: null,
    enabled: true,
  });
  denied(
    await rules.review(request('CREATE', segment('copy', 'seg'))),
    409,
    'Failover segment with name seg already exists.',
  );
  assert.ok((await rules.review(request('CREATE', segment('other', 'seg-2')))).allowed);
});

test('renaming a segment onto a taken name is denied; keeping its own name is not a conflict', async () => {
  const { repo, rules } = fixture();
  const a = await repo.createSegment({
    name: 'a',
    service_type: 'C',
    recovery_method: 'auto',
    description: null,
    enabled: true,
  });
  await repo.createSegment({ name: 'b', service_type: 'C', recovery_method: 'auto', description: null, enabled: true });
  const old = segment(a.k8sName, 'a', { uuid: a.uuid, id: a.id, ...ready });
  denied(
    await rules.review(request('UPDATE', segment(a.k8sName, 'b'), old)),
    409,
    'Failover segment with name b already exists.',
  );
  const edited = segment(a.k8sName, 'a');
  edited.spec.description = 'new text';
  assert.ok((await rules.review(request('UPDATE', edited, old))).allowed);
});

test('a host name taken in another segment is denied; an unknown compute host is denied with Masakari’s 400', async () => {
  const f = fixture();
  const { rules } = f;
  const s = await withComputeHost(f);
  denied(
    await rules.review(request('CREATE', host('h2', 'compute-1', 'elsewhere'))),
    409,
    'Host with name compute-1 already exists.',
  );
  denied(
    await rules.review(request('CREATE', host('h3', 'ghost', s.k8sName))),
    400,
    'Compute service with name ghost could not be found.',
  );
  const ok = await rules.review(request('CREATE', host('h4', 'compute-2', s.k8sName)));
  assert.equal(ok, { allowed: true });
});

test('a host applied before its segment is allowed with a warning (GitOps ordering)', async () => {
  const { rules } = fixture();
  const v = await rules.review(request('CREATE', host('h', 'compute-1', 'later')));
  assert.ok(v.allowed);
  assert.match(v.allowed ? (v.warnings?.[0] ?? '') : '', 'FailoverSegment later (spec.segmentRef) does not exist yet');
  // a segment that exists but is not admitted yet (applied in the same batch) is no reason to warn
  assert.equal(await rules.review(request('CREATE', host('h2', 'compute-2', 'pending-segment'))), { allowed: true });
});

test('Nova failures fail closed: unreachable, too slow, or not configured', async () => {
  const broken = fixture({
    compute: { exists: async () => Promise.reject(new UnexpectedApiError('masakari.exception.MasakariException')) },
  });
  const v1 = await broken.rules.review(request('CREATE', host('h', 'compute-1', 's')));
  assert.is(v1.allowed, false);
  if (!v1.allowed) {
    assert.is(v1.code, 503);
    assert.match(v1.message, 'Cannot check with Nova that compute service compute-1 exists');
    assert.match(v1.message, "<class 'masakari.exception.MasakariException'>");
  }
  const slow = fixture({ compute: { exists: () => new Promise(() => undefined) }, novaTimeoutMs: 20 });
  const v2 = await slow.rules.review(request('CREATE', host('h', 'compute-1', 's')));
  if (v2.allowed) assert.unreachable('a hanging Nova must not admit the host');
  else assert.match(v2.message, 'no answer within 20 ms');
  const none = fixture({ compute: null });
  const v3 = await none.rules.review(request('CREATE', host('h', 'compute-1', 's')));
  if (v3.allowed) assert.unreachable('no Nova must not admit the host');
  else
    assert.is(v3.message, 'Cannot check that compute service compute-1 exists: this operator has no Nova configured.');
});

test('update and delete of a segment in use are denied with Masakari’s messages', async () => {
  const { rules, s, segObj } = await inUse();
  const edited = structuredClone(segObj);
  edited.spec.recoveryMethod = 'reserved_host';
  denied(
    await rules.review(request('UPDATE', edited, segObj)),
    409,
    `Failover segment ${s.uuid} can't be updated as it is in-use to process notifications.`,
  );
  denied(
    await rules.review(request('DELETE', undefined, segObj)),
    409,
    `Failover segment (${s.uuid}) can't be deleted as it is in-use to process notifications.`,
  );
});

test('update and delete of a host in use are denied with Masakari’s messages', async () => {
  const { rules, h, hostObj } = await inUse();
  const edited = structuredClone(hostObj);
  edited.spec.reserved = true;
  denied(
    await rules.review(request('UPDATE', edited, hostObj)),
    409,
    `Host ${h.uuid} can't be updated as it is in-use to process notifications.`,
  );
  denied(
    await rules.review(request('DELETE', undefined, hostObj)),
    409,
    `Host ${h.uuid} can't be deleted as it is in-use to process notifications.`,
  );
});

test('in use: a change of spec.fencing alone passes (fixing a BMC while its fence holds the recovery)', async () => {
  const { rules, hostObj } = await inUse();
  const fenced = structuredClone(hostObj);
  fenced.spec.fencing = {
    driver: 'redfish',
    address: 'https://10.0.0.5',
    systemId: '1',
    credentialsSecretRef: { name: 'bmc' },
  };
  assert.ok((await rules.review(request('UPDATE', fenced, hostObj))).allowed, 'fencing added');
  const moved = structuredClone(fenced);
  moved.spec.fencing!.address = 'https://10.0.0.6';
  assert.ok((await rules.review(request('UPDATE', moved, fenced))).allowed, 'fencing changed');
  const both = structuredClone(moved);
  both.spec.reserved = true;
  assert.is((await rules.review(request('UPDATE', both, fenced))).allowed, false, 'a Masakari field too: in use');
});

test('in use: metadata-only edits, deletions in progress and the operator’s own writes pass', async () => {
  const { repo, rules, segObj, hostObj, s } = await inUse();
  const labelled = structuredClone(segObj);
  labelled.metadata.labels = { team: 'a' };
  assert.ok((await rules.review(request('UPDATE', labelled, segObj))).allowed, 'labels only');
  const edited = structuredClone(hostObj);
  edited.spec.reserved = true;
  const byStore = request('UPDATE', edited, hostObj, {
    userInfo: { username: OPERATOR },
    options: { fieldManager: FIELD_MANAGERS.api },
  });
  assert.ok((await rules.review(byStore)).allowed, 'the REST path already applied the rules');
  const finalizing = structuredClone(segObj);
  finalizing.metadata.deletionTimestamp = '2026-01-01T00:00:00Z';
  finalizing.metadata.finalizers = [];
  assert.ok(
    (
      await rules.review(
        request('UPDATE', finalizing, { ...finalizing, metadata: { ...finalizing.metadata, finalizers: ['x'] } }),
      )
    ).allowed,
  );
  // the segment's cascade: once the segment is hidden (being deleted), its hosts are not in use
  await repo.deleteSegment(s.uuid);
  assert.ok((await rules.review(request('DELETE', undefined, hostObj))).allowed);
});

test('an operator field manager from another user is checked like any kubectl write', async () => {
  const { rules, s, segObj } = await inUse();
  const edited = structuredClone(segObj);
  edited.spec.recoveryMethod = 'reserved_host';
  for (const fieldManager of Object.values(FIELD_MANAGERS)) {
    const forged = request('UPDATE', edited, segObj, { options: { fieldManager } });
    denied(
      await rules.review(forged),
      409,
      `Failover segment ${s.uuid} can't be updated as it is in-use to process notifications.`,
    );
  }
  // the Nova check too: `kubectl create --field-manager=masakari-import` of a host Nova does not know
  const ghost = request('CREATE', host('ghost', 'ghost-compute', s.k8sName), undefined, {
    options: { fieldManager: FIELD_MANAGERS.import },
  });
  denied(await rules.review(ghost), 400, 'Compute service with name ghost-compute could not be found.');
  // no user name at all is nobody's
  const anonymous = request('UPDATE', edited, segObj, { userInfo: {}, options: { fieldManager: FIELD_MANAGERS.api } });
  assert.is((await rules.review(anonymous)).allowed, false);
});

test('the operator’s identity passes with its field manager; its other writes are checked', async () => {
  const { rules, s, segObj } = await inUse();
  const edited = structuredClone(segObj);
  edited.spec.recoveryMethod = 'reserved_host';
  const own = request('UPDATE', edited, segObj, {
    userInfo: { username: OPERATOR },
    options: { fieldManager: FIELD_MANAGERS.api },
  });
  assert.ok((await rules.review(own)).allowed, 'the REST path already applied the rules');
  // The same identity without an operator field manager: in local runs the
  // operator and the developer's kubectl share the control plane's admin.
  const kubectl = request('UPDATE', edited, segObj, {
    userInfo: { username: OPERATOR },
    options: { fieldManager: 'kubectl-patch' },
  });
  denied(
    await rules.review(kubectl),
    409,
    `Failover segment ${s.uuid} can't be updated as it is in-use to process notifications.`,
  );
  // and a DELETE is trusted only from the deleters, not from every operator identity
  denied(
    await rules.review(request('DELETE', undefined, segObj, { userInfo: { username: OPERATOR } })),
    409,
    `Failover segment (${s.uuid}) can't be deleted as it is in-use to process notifications.`,
  );
});

test('deletes by a trusted service account pass; by others they are checked', async () => {
  const f = await inUse();
  const trusted = new AdmissionRules({
    repo: f.repo,
    segmentExists: async () => true,
    underRecovery: (uuid) => f.service.isUnderRecovery(uuid),
    compute: nova,
    validators: MASAKARI_VALIDATORS,
    trust: { fieldManagers: [], operatorUsers: [], deleters: ['system:serviceaccount:masakari:api'] },
    novaTimeoutMs: 1000,
    log: pino({ level: 'silent' }),
  });
  const del = (username: string) => request('DELETE', undefined, f.segObj, { userInfo: { username } });
  assert.ok((await trusted.review(del('system:serviceaccount:masakari:api'))).allowed);
  assert.is((await trusted.review(del('alice'))).allowed, false);
});

test('immutable fields: segmentRef and notification spec, with the CRDs’ wording', async () => {
  const { rules } = fixture();
  const old = host('h', 'compute-1', 'a');
  denied(
    await rules.review(request('UPDATE', host('h', 'compute-1', 'b'), old)),
    422,
    'segmentRef is immutable; a host cannot move to another segment',
  );
  const n = notification('compute-1');
  const changed = structuredClone(n);
  changed.spec.payload.event = 'STARTED';
  denied(
    await rules.review(request('UPDATE', changed, n)),
    422,
    'spec is immutable; a notification cannot be changed once received',
  );
  const annotated = structuredClone(n);
  annotated.metadata.annotations = { note: 'x' };
  assert.ok((await rules.review(request('UPDATE', annotated, n))).allowed);
});

test('invalid specs are denied with the message the REST API gives', async () => {
  const { rules } = fixture();
  const bad = segment('bad', ' padded ');
  const v = await rules.review(request('CREATE', bad));
  assert.is(v.allowed, false);
  if (!v.allowed) assert.is(v.message, MASAKARI_VALIDATORS.segment(bad.spec));
});

test('notifications for unknown or maintenance hosts are allowed with a warning; the reconciler decides', async () => {
  const f = fixture();
  const { rules } = f;
  const unknown = await rules.review(request('CREATE', notification('nobody')));
  assert.ok(unknown.allowed);
  assert.match(unknown.allowed ? (unknown.warnings?.[0] ?? '') : '', 'Host with name nobody could not be found.');
  await withComputeHost(f, { on_maintenance: true });
  const maintenance = await rules.review(request('CREATE', notification('compute-1')));
  assert.match(
    maintenance.allowed ? (maintenance.warnings?.[0] ?? '') : '',
    'is ignored as the host is already under maintenance',
  );
});

test('a notification the engine will fail for its generated_time is allowed with a warning that says so', async () => {
  const f = fixture({ now: new Date('2026-12-04T12:00:00Z') });
  const { rules } = f;
  await withComputeHost(f);
  const old = notification('compute-1');
  old.spec.generatedTime = '2026-11-03T12:00:00';
  const v = await rules.review(request('CREATE', old));
  assert.ok(v.allowed);
  assert.match(
    v.allowed ? (v.warnings?.[0] ?? '') : '',
    'its generated_time 2026-11-03T12:00:00 is older than notifications_expired_interval (86400 s)',
  );
  const fresh = notification('compute-1');
  fresh.spec.generatedTime = '2026-12-04T11:59:00';
  const ok = await rules.review(request('CREATE', fresh));
  assert.equal(ok.allowed ? (ok.warnings ?? []) : ['refused'], []);
});

test('status subresource and other groups are never judged', async () => {
  const { rules } = await inUse();
  const seg = segment('x', 'x');
  assert.ok((await rules.review(request('UPDATE', seg, segment('x', 'y'), { subResource: 'status' }))).allowed);
  const other = request('CREATE', seg, undefined, { kind: { group: 'apps', version: 'v1', kind: 'Deployment' } });
  assert.ok((await rules.review(other)).allowed);
});

test.run();
