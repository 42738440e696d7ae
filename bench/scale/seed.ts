// Seeding bench/scale: many hosts and notifications written straight to the
// API server (not through the facade's intake rate), each looking exactly as
// if the operator had admitted it.
//
// "Exactly" is not written down here: the operator itself makes one template
// of each kind first (segments, one host, one COMPUTE_HOST STARTED
// notification that its engine takes to `finished`), and every bulk object is
// a copy of that template with its names, uuids, id and owner swapped. So the
// labels, annotations, finalizers, owner references, conditions and status
// fields are whatever the store writes today, and stay so when the store
// changes. Bookkeeping that is per host (the name claim) is copied too;
// duplicate-detection bookkeeping is not, as if every seeded notification
// were older than the duplicate window (they are spread over the past).
// Afterwards the id sequences are moved past the seeded ids, as an id
// allocator would have.
import { randomUUID } from 'node:crypto';
import type { KubeClient } from '../../src/k8s/client.ts';
import { isNotFound } from '../../src/k8s/client.ts';
import { RESOURCES } from '../../src/k8s/resources.ts';
import { FIELD_MANAGERS, LABELS } from '../../src/model/constants.ts';
import type { FailoverSegment, HaHost, Notification, ObjectMeta } from '../../src/model/types.ts';
import type { ConfigMap } from '../../src/store/configmap.ts';
import {
  claimObjectName,
  notificationObjectName,
  restObjectName,
  sequenceObjectName,
  type IdKind,
} from '../../src/store/names.ts';
import { inParallel } from '../lib/load.ts';
import type { BenchOperator } from '../lib/operator.ts';

/** The host the templates are made for; the simulator must know it (the facade checks Nova on host create). */
export const TEMPLATE_HOST = 'scaletemplatehost';

interface KubeObject {
  metadata: ObjectMeta;
  status?: Record<string, unknown> | object;
}

export interface SeedPlan {
  segments: number;
  hosts: number;
  notifications: number;
  /** Creates in flight. */
  width: number;
}

export interface SeededHost {
  name: string;
  uuid: string;
}

export interface SeedResult {
  hosts: SeededHost[];
  segmentUuids: string[];
  /** Wall-clock seconds of the bulk creates (templates excluded). */
  hostSeconds: number;
  notificationSeconds: number;
}

async function rest(base: string, method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  const r = await fetch(`${base}/v1${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? null : JSON.stringify(body),
    signal: AbortSignal.timeout(60_000),
  });
  const text = await r.text();
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${text}`);
  return (text ? JSON.parse(text) : {}) as Record<string, unknown>;
}

/**
 * Through the operator (api and engine in one process): `segments` segments,
 * the template host in the first, and one COMPUTE_HOST STARTED notification
 * for it, waited for until the engine has finished it.
 */
export async function makeTemplates(operator: BenchOperator, segments: number): Promise<void> {
  for (let i = 0; i < segments; i++) {
    await rest(operator.apiUrl, 'POST', '/segments', {
      segment: { name: `scale-seg-${String(i).padStart(3, '0')}`, recovery_method: 'auto', service_type: 'COMPUTE' },
    });
  }
  const segs = (await rest(operator.apiUrl, 'GET', '/segments?limit=1000')).segments as Array<{
    uuid: string;
    name: string;
  }>;
  const first = segs.find((s) => s.name === 'scale-seg-000');
  if (!first) throw new Error('template segment scale-seg-000 not listed');
  await rest(operator.apiUrl, 'POST', `/segments/${first.uuid}/hosts`, {
    host: { name: TEMPLATE_HOST, type: 'COMPUTE', control_attributes: 'SSH' },
  });
  const posted = await rest(operator.apiUrl, 'POST', '/notifications', {
    notification: {
      type: 'COMPUTE_HOST',
      hostname: TEMPLATE_HOST,
      generated_time: new Date().toISOString().slice(0, 19),
      payload: { event: 'STARTED', host_status: 'NORMAL', cluster_status: 'ONLINE' },
    },
  });
  const uuid = (posted.notification as { notification_uuid: string }).notification_uuid;
  const deadline = Date.now() + 120_000;
  for (;;) {
    const got = (await rest(operator.apiUrl, 'GET', `/notifications/${uuid}`)).notification as { status: string };
    if (got.status === 'finished') return;
    if (['error', 'failed', 'ignored'].includes(got.status)) {
      throw new Error(`template notification ended ${got.status}`);
    }
    if (Date.now() > deadline) throw new Error(`template notification still ${got.status} after 120 s`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** A template's JSON with the server-assigned metadata dropped and each `from` replaced by its `to`, in order. */
export function cloneWith<T extends KubeObject>(template: T, subs: ReadonlyArray<readonly [string, string]>): T {
  const {
    uid: _uid,
    resourceVersion: _rv,
    creationTimestamp: _ct,
    managedFields: _mf,
    generation: _g,
    ...meta
  } = template.metadata;
  let text = JSON.stringify({ ...template, metadata: meta });
  for (const [from, to] of subs) if (from) text = text.split(from).join(to);
  return JSON.parse(text) as T;
}

/** `date` written the way `like` is (with or without fraction and Z), as the sender's generated_time was. */
export function timeLike(like: string, date: Date): string {
  let s = date.toISOString();
  if (!/\.\d+/.test(like)) s = s.replace(/\.\d+/, '');
  if (!/Z$/i.test(like)) s = s.replace(/Z$/, '');
  return s;
}

function setId(obj: KubeObject, id: number): void {
  (obj.status as { id?: number }).id = id;
  if (obj.metadata.labels?.[LABELS.id] !== undefined) obj.metadata.labels[LABELS.id] = String(id);
}

/** Creates the object, then writes its status through the status subresource (create ignores status). */
async function createAdmitted<T extends KubeObject>(
  kube: KubeClient,
  ref: (typeof RESOURCES)['hosts' | 'notifications'],
  namespace: string,
  obj: T,
): Promise<T> {
  const { status, ...rest } = obj;
  const created = await kube.create<T>(ref, namespace, rest as T, { fieldManager: FIELD_MANAGERS.api });
  await kube.mergePatch(
    ref,
    namespace,
    obj.metadata.name ?? '',
    { status },
    {
      fieldManager: FIELD_MANAGERS.api,
      status: true,
    },
  );
  return created;
}

async function nextId(kube: KubeClient, namespace: string, kind: IdKind): Promise<number> {
  const cm = await kube.get<ConfigMap>(RESOURCES.configMaps, namespace, sequenceObjectName(kind));
  return Number(cm.data?.next);
}

/** Moves the id sequence of `kind` to `next` (the seeder is the only writer while it runs). */
async function setNextId(kube: KubeClient, namespace: string, kind: IdKind, next: number): Promise<void> {
  const cm = await kube.get<ConfigMap>(RESOURCES.configMaps, namespace, sequenceObjectName(kind));
  await kube.replace(RESOURCES.configMaps, namespace, sequenceObjectName(kind), {
    ...cm,
    data: { ...cm.data, next: String(next) },
  });
}

function progress(what: string, total: number): (done: number) => void {
  const step = Math.max(1, Math.ceil(total / 10));
  const started = performance.now();
  return (done) => {
    if (done % step === 0 || done === total) {
      const s = (performance.now() - started) / 1000;
      console.log(`  ${what}: ${done}/${total} (${s.toFixed(0)} s, ${(done / s).toFixed(0)}/s)`);
    }
  };
}

/** Bulk hosts and notifications from the templates makeTemplates() left in `namespace`. */
export async function seedFromTemplates(kube: KubeClient, namespace: string, plan: SeedPlan): Promise<SeedResult> {
  const segs = (await kube.list<FailoverSegment>(RESOURCES.segments, namespace)).items
    .filter((s) => s.status?.uuid)
    .sort((a, b) => a.spec.name.localeCompare(b.spec.name));
  const tSeg = segs[0];
  const tHost = (await kube.list<HaHost>(RESOURCES.hosts, namespace)).items.find((h) => h.spec.name === TEMPLATE_HOST);
  const tNote = (await kube.list<Notification>(RESOURCES.notifications, namespace)).items.find(
    (n) => n.spec.hostname === TEMPLATE_HOST,
  );
  if (!tSeg || !tHost || !tNote) throw new Error('templates missing: run makeTemplates() first');
  let tClaim: ConfigMap | undefined;
  try {
    tClaim = await kube.get<ConfigMap>(RESOURCES.configMaps, namespace, claimObjectName('host', TEMPLATE_HOST));
  } catch (e) {
    if (!isNotFound(e)) throw e; // no name claims in this version of the store: nothing to copy
  }
  const segSubs = (seg: FailoverSegment): Array<[string, string]> => [
    [tSeg.metadata.name ?? '', seg.metadata.name ?? ''],
    [tSeg.metadata.uid ?? '', seg.metadata.uid ?? ''],
    [tSeg.status?.uuid ?? '', seg.status?.uuid ?? ''],
  ];
  const hostNameK8s = tHost.metadata.name ?? '';
  const hostUuid = tHost.status?.uuid ?? '';

  // Hosts (and their name claims), round-robin over the segments.
  const hosts: Array<SeededHost & { k8sName: string; seg: FailoverSegment }> = Array.from(
    { length: plan.hosts },
    (_, i) => {
      const name = `scale-${String(i).padStart(6, '0')}`;
      const uuid = randomUUID();
      return { name, uuid, k8sName: restObjectName(name, uuid, 'host'), seg: segs[i % segs.length] as FailoverSegment };
    },
  );
  const firstHostId = await nextId(kube, namespace, 'hosts');
  let t0 = performance.now();
  const hostProgress = progress('hosts', plan.hosts);
  let hostsDone = 0;
  await inParallel(hosts, plan.width, async (h, i) => {
    const subs: Array<[string, string]> = [
      [hostNameK8s, h.k8sName],
      [hostUuid, h.uuid],
      ...segSubs(h.seg),
      [TEMPLATE_HOST, h.name],
    ];
    const obj = cloneWith(tHost, subs);
    setId(obj, firstHostId + i);
    const created = await createAdmitted(kube, RESOURCES.hosts, namespace, obj);
    if (tClaim) {
      const claim = cloneWith(tClaim, [
        [tClaim.metadata.name ?? '', claimObjectName('host', h.name)],
        [tHost.metadata.uid ?? '', created.metadata.uid ?? ''],
        ...subs,
      ]);
      await kube.create(RESOURCES.configMaps, namespace, claim, { fieldManager: FIELD_MANAGERS.api });
    }
    hostProgress(++hostsDone);
  });
  await setNextId(kube, namespace, 'hosts', firstHostId + plan.hosts);
  const hostSeconds = (performance.now() - t0) / 1000;

  // Notifications, round-robin over the hosts, generated one second apart up to now.
  const firstNoteId = await nextId(kube, namespace, 'notifications');
  const noteNameK8s = tNote.metadata.name ?? '';
  const noteUuid = tNote.status?.uuid ?? '';
  const now = Date.now();
  t0 = performance.now();
  const noteProgress = progress('notifications', plan.notifications);
  let notesDone = 0;
  const indices = Array.from({ length: plan.notifications }, (_, j) => j);
  await inParallel(indices, plan.width, async (j) => {
    const h = hosts[j % hosts.length] as (typeof hosts)[number];
    const uuid = randomUUID();
    const obj = cloneWith(tNote, [
      [noteNameK8s, notificationObjectName(h.name, tNote.spec.type, uuid)],
      [noteUuid, uuid],
      [hostNameK8s, h.k8sName],
      [hostUuid, h.uuid],
      ...segSubs(h.seg),
      [TEMPLATE_HOST, h.name],
    ]);
    obj.spec.generatedTime = timeLike(tNote.spec.generatedTime, new Date(now - (plan.notifications - j) * 1000));
    setId(obj, firstNoteId + j);
    await createAdmitted(kube, RESOURCES.notifications, namespace, obj);
    noteProgress(++notesDone);
  });
  await setNextId(kube, namespace, 'notifications', firstNoteId + plan.notifications);
  const notificationSeconds = (performance.now() - t0) / 1000;
  return {
    hosts: hosts.map(({ name, uuid }) => ({ name, uuid })),
    segmentUuids: segs.map((s) => s.status?.uuid ?? ''),
    hostSeconds,
    notificationSeconds,
  };
}
