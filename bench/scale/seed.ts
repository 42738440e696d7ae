// Seeding bench/scale: many hosts and notifications, each looking exactly as
// if the operator had admitted it, written far faster than the facade's
// intake rate.
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
//
// Two ways to write the copies (`via`):
//
// - 'etcd' (the default): the template's bytes as the API server stored them
//   are read from etcd and the copies written straight back into etcd, 128 to
//   a transaction, under the keys the API server uses
//   (/registry/<group>/<plural>/<namespace>/<name>). Custom resources are
//   stored as JSON: the copy is the template's JSON with names, uuids, id,
//   owner uid and generated time swapped, a fresh metadata.uid and
//   creationTimestamp, and no resourceVersion (the API server never stores
//   one: it is etcd's revision of the key). ConfigMaps are stored as
//   protobuf: their copies swap only strings of the same length, so every
//   length prefix stays right (seeded host names are as long as the
//   template's for that reason), and keep the template's creationTimestamp.
//   What this bypasses is the API server's write path (admission, schema
//   validation, defaulting, managedFields bookkeeping) for objects whose
//   every byte that path already produced for the template. What the
//   benchmark measures is unchanged: the API server's watch on etcd sees
//   ordinary puts and fills its watch cache, and the operator's lists and
//   watches, selectors included, are served from it as for any object.
//   About 100,000 objects a minute on a 2-core machine.
// - 'apiserver': each copy is created through the API server (create, then
//   its status), `width` requests in flight; the API server's own admission
//   and validation see every object. About 50 objects a second on a busy
//   2-core machine (the 100k size would take over an hour).
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
import { etcdCreateAll, etcdGet, MAX_TXN_OPS, storageKey, txnBatches, type Put } from '../lib/etcd.ts';
import { inParallel } from '../lib/load.ts';
import type { BenchOperator } from '../lib/operator.ts';

/** The host the templates are made for; the simulator must know it (the facade checks Nova on host create). */
export const TEMPLATE_HOST = 'scaletemplatehost';

interface KubeObject {
  metadata: ObjectMeta;
  status?: Record<string, unknown> | object;
}

export type SeedVia = 'etcd' | 'apiserver';

export interface SeedPlan {
  segments: number;
  hosts: number;
  notifications: number;
  /** Creates (via 'apiserver') or transactions (via 'etcd') in flight. */
  width: number;
  via: SeedVia;
  /** etcd's client URL; required via 'etcd'. */
  etcdUrl?: string;
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

/**
 * A copy of an object from the JSON the API server stored for it: each
 * `from` replaced by its `to`, then its own uid and creationTimestamp, and no
 * resourceVersion (the API server strips it before storing; it is etcd's
 * revision). managedFields and generation stay as the API server wrote them.
 */
export function cloneStored<T extends KubeObject>(
  stored: string,
  subs: ReadonlyArray<readonly [string, string]>,
  uid: string,
  creationTimestamp: string,
): T {
  let text = stored;
  for (const [from, to] of subs) if (from) text = text.split(from).join(to);
  const obj = JSON.parse(text) as T;
  delete obj.metadata.resourceVersion;
  obj.metadata.uid = uid;
  obj.metadata.creationTimestamp = creationTimestamp;
  return obj;
}

/**
 * A copy of a protobuf-encoded object (a core kind as the API server stores
 * it) with each `from` replaced by its `to`. Only swaps of the same byte
 * length keep protobuf's length prefixes right, so any other is refused.
 */
export function swapSameLength(stored: Buffer, subs: ReadonlyArray<readonly [string, string]>): Buffer {
  let out = Buffer.from(stored);
  for (const [from, to] of subs) {
    if (!from) continue;
    const f = Buffer.from(from);
    const t = Buffer.from(to);
    if (f.length !== t.length) {
      throw new Error(`protobuf copy: cannot swap ${JSON.stringify(from)} for ${JSON.stringify(to)} (lengths differ)`);
    }
    const parts: Buffer[] = [];
    let at = 0;
    for (let k = out.indexOf(f, at); k >= 0; k = out.indexOf(f, at)) {
      parts.push(out.subarray(at, k), t);
      at = k + f.length;
    }
    parts.push(out.subarray(at));
    out = Buffer.concat(parts);
  }
  return out;
}

/** The name of the i-th seeded host: as long as TEMPLATE_HOST, so protobuf copies of its name claim stay valid. */
export function seededHostName(i: number): string {
  return `scale-${String(i).padStart(TEMPLATE_HOST.length - 'scale-'.length, '0')}`;
}

/** A creationTimestamp as the API server writes it (whole seconds). */
const timestamp = (d: Date) => d.toISOString().replace(/\.\d+Z$/, 'Z');

/** `date` written the way `like` is (as many fraction digits, with or without Z), as the sender's generated_time was. */
export function timeLike(like: string, date: Date): string {
  let s = date.toISOString();
  const digits = /\.(\d+)/.exec(like)?.[1]?.length ?? 0;
  s = s.replace(/\.(\d+)/, (_, ms: string) => (digits ? `.${ms.padEnd(digits, '0').slice(0, digits)}` : ''));
  if (!/Z$/i.test(like)) s = s.replace(/Z$/, '');
  return s;
}

/**
 * A seeded notification was generated, created and last updated at `at`
 * (each written the way the template wrote it), so that the seeded ones are
 * spread over the past in created_at order as real ones are, not one instant.
 */
function setTimes(obj: Notification, template: Notification, at: Date): void {
  obj.spec.generatedTime = timeLike(template.spec.generatedTime, at);
  const status = obj.status as { createdAt?: string; updatedAt?: string } | undefined;
  if (status?.createdAt) status.createdAt = timeLike(status.createdAt, at);
  if (status?.updatedAt) status.updatedAt = timeLike(status.updatedAt, at);
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

interface Templates {
  segs: FailoverSegment[];
  tHost: HaHost;
  tNote: Notification;
  tClaim: ConfigMap | undefined;
}

async function readTemplates(kube: KubeClient, namespace: string): Promise<Templates> {
  const segs = (await kube.list<FailoverSegment>(RESOURCES.segments, namespace)).items
    .filter((s) => s.status?.uuid)
    .sort((a, b) => a.spec.name.localeCompare(b.spec.name));
  const tHost = (await kube.list<HaHost>(RESOURCES.hosts, namespace)).items.find((h) => h.spec.name === TEMPLATE_HOST);
  const tNote = (await kube.list<Notification>(RESOURCES.notifications, namespace)).items.find(
    (n) => n.spec.hostname === TEMPLATE_HOST,
  );
  if (!segs.length || !tHost || !tNote) throw new Error('templates missing: run makeTemplates() first');
  let tClaim: ConfigMap | undefined;
  try {
    tClaim = await kube.get<ConfigMap>(RESOURCES.configMaps, namespace, claimObjectName('host', TEMPLATE_HOST));
  } catch (e) {
    if (!isNotFound(e)) throw e; // no name claims in this version of the store: nothing to copy
  }
  return { segs, tHost, tNote, tClaim };
}

type PlannedHost = SeededHost & { k8sName: string; uid: string; seg: FailoverSegment };

/**
 * What changes from the template to the copy for one host (and everything of
 * that host: its claim, its notifications, which may name its uid as owner).
 */
function hostSubs(t: Templates, h: PlannedHost): Array<[string, string]> {
  const seg0 = t.segs[0] as FailoverSegment;
  return [
    [t.tHost.metadata.name ?? '', h.k8sName],
    [t.tHost.status?.uuid ?? '', h.uuid],
    [t.tHost.metadata.uid ?? '', h.uid],
    [seg0.metadata.name ?? '', h.seg.metadata.name ?? ''],
    [seg0.metadata.uid ?? '', h.seg.metadata.uid ?? ''],
    [seg0.status?.uuid ?? '', h.seg.status?.uuid ?? ''],
    [TEMPLATE_HOST, h.name],
  ];
}

/** Bulk hosts and notifications from the templates makeTemplates() left in `namespace`. */
export async function seedFromTemplates(kube: KubeClient, namespace: string, plan: SeedPlan): Promise<SeedResult> {
  const t = await readTemplates(kube, namespace);
  // Hosts (and their name claims), round-robin over the segments.
  const hosts: PlannedHost[] = Array.from({ length: plan.hosts }, (_, i) => {
    const name = seededHostName(i);
    const uuid = randomUUID();
    return {
      name,
      uuid,
      k8sName: restObjectName(name, uuid, 'host'),
      uid: randomUUID(),
      seg: t.segs[i % t.segs.length] as FailoverSegment,
    };
  });
  // Notifications, round-robin over the hosts, generated one second apart up to now.
  const now = Date.now();
  const noteOf = (j: number) => {
    const h = hosts[j % hosts.length] as PlannedHost;
    const uuid = randomUUID();
    const subs: Array<[string, string]> = [
      [t.tNote.metadata.name ?? '', notificationObjectName(h.name, t.tNote.spec.type, uuid)],
      [t.tNote.status?.uuid ?? '', uuid],
      ...hostSubs(t, h),
    ];
    const at = new Date(now - (plan.notifications - j) * 1000);
    return { subs, at };
  };
  const firstHostId = await nextId(kube, namespace, 'hosts');
  const firstNoteId = await nextId(kube, namespace, 'notifications');
  const write = plan.via === 'etcd' ? viaEtcd : viaApiServer;
  const { hostSeconds, notificationSeconds } = await write(kube, namespace, plan, t, hosts, noteOf, {
    firstHostId,
    firstNoteId,
  });
  await setNextId(kube, namespace, 'hosts', firstHostId + plan.hosts);
  await setNextId(kube, namespace, 'notifications', firstNoteId + plan.notifications);
  return {
    hosts: hosts.map(({ name, uuid }) => ({ name, uuid })),
    segmentUuids: t.segs.map((s) => s.status?.uuid ?? ''),
    hostSeconds,
    notificationSeconds,
  };
}

type Writer = (
  kube: KubeClient,
  namespace: string,
  plan: SeedPlan,
  t: Templates,
  hosts: PlannedHost[],
  noteOf: (j: number) => { subs: Array<[string, string]>; at: Date },
  ids: { firstHostId: number; firstNoteId: number },
) => Promise<{ hostSeconds: number; notificationSeconds: number }>;

const viaApiServer: Writer = async (kube, namespace, plan, t, hosts, noteOf, ids) => {
  let t0 = performance.now();
  const hostProgress = progress('hosts', plan.hosts);
  let hostsDone = 0;
  await inParallel(hosts, plan.width, async (h, i) => {
    const obj = cloneWith(t.tHost, hostSubs(t, h));
    setId(obj, ids.firstHostId + i);
    const created = await createAdmitted(kube, RESOURCES.hosts, namespace, obj);
    h.uid = created.metadata.uid ?? ''; // the API server's, for the claim and the notifications
    if (t.tClaim) {
      const claim = cloneWith(t.tClaim, [
        [t.tClaim.metadata.name ?? '', claimObjectName('host', h.name)],
        ...hostSubs(t, h),
      ]);
      await kube.create(RESOURCES.configMaps, namespace, claim, { fieldManager: FIELD_MANAGERS.api });
    }
    hostProgress(++hostsDone);
  });
  const hostSeconds = (performance.now() - t0) / 1000;
  t0 = performance.now();
  const noteProgress = progress('notifications', plan.notifications);
  let notesDone = 0;
  const indices = Array.from({ length: plan.notifications }, (_, j) => j);
  await inParallel(indices, plan.width, async (j) => {
    const { subs, at } = noteOf(j);
    const obj = cloneWith(t.tNote, subs);
    setTimes(obj, t.tNote, at);
    setId(obj, ids.firstNoteId + j);
    await createAdmitted(kube, RESOURCES.notifications, namespace, obj);
    noteProgress(++notesDone);
  });
  return { hostSeconds, notificationSeconds: (performance.now() - t0) / 1000 };
};

/** Writes `count` objects made by `put(i)`, up to MAX_TXN_OPS puts to a transaction (fewer if large), `width` chunks in flight. */
async function createInEtcd(
  etcdUrl: string,
  what: string,
  count: number,
  width: number,
  put: (i: number) => Put[],
): Promise<number> {
  const t0 = performance.now();
  const report = progress(what, count);
  let done = 0;
  const perTxn = Math.max(1, Math.floor(MAX_TXN_OPS / put(0).length));
  const chunks = Array.from({ length: Math.ceil(count / perTxn) }, (_, c) => c * perTxn);
  await inParallel(chunks, width, async (start) => {
    const end = Math.min(count, start + perTxn);
    const puts: Put[] = [];
    for (let i = start; i < end; i++) puts.push(...put(i));
    for (const batch of txnBatches(puts)) await etcdCreateAll(etcdUrl, batch);
    for (let i = start; i < end; i++) report(++done);
  });
  return (performance.now() - t0) / 1000;
}

const viaEtcd: Writer = async (_kube, namespace, plan, t, hosts, noteOf, ids) => {
  const etcdUrl = plan.etcdUrl;
  if (!etcdUrl) throw new Error('seeding via etcd needs the etcd client URL');
  const stored = async (ref: (typeof RESOURCES)[keyof typeof RESOURCES], name: string): Promise<Buffer> => {
    const value = await etcdGet(etcdUrl, storageKey(ref, namespace, name));
    if (!value) throw new Error(`etcd: no ${ref.plural} ${namespace}/${name} at ${storageKey(ref, namespace, name)}`);
    return value;
  };
  const hostJson = (await stored(RESOURCES.hosts, t.tHost.metadata.name ?? '')).toString('utf8');
  const noteJson = (await stored(RESOURCES.notifications, t.tNote.metadata.name ?? '')).toString('utf8');
  const claimName = t.tClaim?.metadata.name ?? '';
  const claimBytes = t.tClaim ? await stored(RESOURCES.configMaps, claimName) : undefined;
  const created = timestamp(new Date());

  const hostSeconds = await createInEtcd(etcdUrl, 'hosts', plan.hosts, plan.width, (i) => {
    const h = hosts[i] as PlannedHost;
    const subs = hostSubs(t, h);
    const obj = cloneStored<HaHost>(hostJson, subs, h.uid, created);
    setId(obj, ids.firstHostId + i);
    const puts: Put[] = [{ key: storageKey(RESOURCES.hosts, namespace, h.k8sName), value: JSON.stringify(obj) }];
    if (claimBytes) {
      const name = claimObjectName('host', h.name);
      const claim = swapSameLength(claimBytes, [
        [claimName, name],
        [t.tClaim?.metadata.uid ?? '', randomUUID()],
        [t.tHost.metadata.uid ?? '', h.uid],
        ...subs,
      ]);
      puts.push({ key: storageKey(RESOURCES.configMaps, namespace, name), value: claim });
    }
    return puts;
  });
  const notificationSeconds = await createInEtcd(etcdUrl, 'notifications', plan.notifications, plan.width, (j) => {
    const { subs, at } = noteOf(j);
    const obj = cloneStored<Notification>(noteJson, subs, randomUUID(), timestamp(at));
    setTimes(obj, t.tNote, at);
    setId(obj, ids.firstNoteId + j);
    return [
      { key: storageKey(RESOURCES.notifications, namespace, obj.metadata.name ?? ''), value: JSON.stringify(obj) },
    ];
  });
  return { hostSeconds, notificationSeconds };
};
