// Acceptance of `masakari-operator import`: segments and hosts created in the
// reference masakari-api 22.0.0 (PyPI, noauth2, SQLite) are copied into a
// namespace by the real command (a child process), keep their uuids, ids
// (unless taken) and fields, and our facade then lists them as the reference
// does. --dry-run writes nothing; a second run writes nothing; a change in
// Masakari is carried over by the next run; a name conflict fails that object
// with exit status 1 and leaves the rest alone.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { useNamespace, type TestNamespace } from '../support/cluster.ts';
import { startSimulator, type Simulator } from '../../tools/simulator/server.ts';
import { createKubeClient } from '../../src/k8s/kube-client.ts';
import type { KubeClient } from '../../src/k8s/client.ts';
import { RESOURCES } from '../../src/k8s/resources.ts';
import { ANNOTATIONS, LABELS } from '../../src/model/constants.ts';
import type { FailoverSegment, HaHost } from '../../src/model/types.ts';
import { loadConfig } from '../../src/config/load.ts';
import { standaloneStore } from '../../src/testing/store.ts';
import { claimObjectName } from '../../src/store/names.ts';
import { startReferenceMasakari, type ReferenceMasakari } from './support/reference-masakari.ts';
import { e2eVenv } from './support/python-env.ts';
import { startOperator, type OperatorProcess } from './support/stack.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const nodeBin = path.join(root, 'node_modules/.bin/node');
const HOSTS = ['compute-1', 'compute-2', 'compute-3', 'compute-4', 'compute-5', 'compute-6'];

type Json = Record<string, unknown>;

interface Ctx {
  sim: Simulator;
  ref: ReferenceMasakari;
  ns: TestNamespace;
  kube: KubeClient & { close(): Promise<void> };
  /** Segment and host uuids in the reference, by name. */
  seg: Record<string, string>;
  host: Record<string, string>;
  /** The segment id sequence's mark before the import: source ids below it (or used) get new ids. */
  segmentMark: number;
}

const t = suite<Ctx>('masakari-operator import');
let ctx: Ctx;

async function masakari(
  method: string,
  urlPath: string,
  body?: unknown,
  version = '1.3',
): Promise<{ status: number; json: Json }> {
  const r = await fetch(`${ctx.ref.url}/v1${urlPath}`, {
    method,
    headers: {
      accept: 'application/json',
      'openstack-api-version': `instance-ha ${version}`,
      ...(body ? { 'content-type': 'application/json' } : {}),
    },
    body: body ? JSON.stringify(body) : null,
    signal: AbortSignal.timeout(30_000),
  });
  const text = await r.text();
  return { status: r.status, json: text ? (JSON.parse(text) as Json) : {} };
}

async function createSegment(s: Json, version = '1.3'): Promise<string> {
  const r = await masakari('POST', '/segments', { segment: s }, version);
  assert.ok(r.status === 200 || r.status === 201, `${r.status} ${JSON.stringify(r.json)}`);
  return (r.json.segment as Json).uuid as string;
}

async function createHost(segUuid: string, h: Json): Promise<string> {
  const r = await masakari('POST', `/segments/${segUuid}/hosts`, { host: h });
  assert.ok(r.status === 200 || r.status === 201, `${r.status} ${JSON.stringify(r.json)}`);
  return (r.json.host as Json).uuid as string;
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function runImport(...extra: string[]): Promise<Run> {
  return runImportWith({}, ...extra);
}

function runImportWith(env: Record<string, string>, ...extra: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      nodeBin,
      ['--import', 'tsx', 'src/main.ts', 'import', '--from', ctx.ref.url, '--namespace', ctx.ns.namespace, ...extra],
      {
        cwd: root,
        env: { PATH: process.env.PATH, HOME: process.env.HOME, KUBECONFIG: ctx.ns.kubeconfigPath, ...env },
        timeout: 120_000,
        maxBuffer: 16 << 20,
      },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

async function crs(): Promise<{ segments: FailoverSegment[]; hosts: HaHost[] }> {
  const [s, h] = await Promise.all([
    ctx.kube.list<FailoverSegment>(RESOURCES.segments, ctx.ns.namespace),
    ctx.kube.list<HaHost>(RESOURCES.hosts, ctx.ns.namespace),
  ]);
  return { segments: s.items, hosts: h.items };
}

/** metadata.name → resourceVersion of every CR and id-sequence / claim ConfigMap of the namespace. */
async function versions(): Promise<Record<string, string>> {
  const { segments, hosts } = await crs();
  const cms = await ctx.kube.list<{ metadata: { name: string; resourceVersion: string } }>(
    RESOURCES.configMaps,
    ctx.ns.namespace,
    { labelSelector: LABELS.role },
  );
  const out: Record<string, string> = {};
  for (const o of [...segments, ...hosts]) out[`cr/${o.metadata.name}`] = o.metadata.resourceVersion ?? '';
  for (const c of cms.items) out[`cm/${c.metadata.name}`] = c.metadata.resourceVersion;
  return out;
}

const byUuid = <T extends { metadata: { labels?: Record<string, string> } }>(items: T[], uuid: string) =>
  items.find((o) => o.metadata.labels?.[LABELS.uuid] === uuid);

/** Every source list body of the reference and of our facade, keyed by uuid (created_at included: the import keeps it). */
async function listings(base: string): Promise<Record<string, Json>> {
  const get = async (p: string) => {
    const r = await fetch(`${base}/v1${p}`, {
      headers: { accept: 'application/json', 'openstack-api-version': 'instance-ha 1.3' },
      signal: AbortSignal.timeout(30_000),
    });
    assert.is(r.status, 200, `${base}${p}`);
    return (await r.json()) as Json;
  };
  const out: Record<string, Json> = {};
  for (const s of (await get('/segments')).segments as Json[]) {
    out[s.uuid as string] = s;
    for (const h of (await get(`/segments/${s.uuid as string}/hosts`)).hosts as Json[]) {
      out[h.uuid as string] = h;
    }
  }
  return out;
}

// uvu reports a failing before-hook only as "0 passed": print why.
t.before(async () => {
  try {
    await setUp();
  } catch (e) {
    console.error('import test set-up failed:', e);
    throw e;
  }
});

async function setUp(): Promise<void> {
  const venv = await e2eVenv();
  const sim = await startSimulator({ hosts: HOSTS });
  const c = sim.credentials;
  let ref: ReferenceMasakari | undefined;
  try {
    ref = await startReferenceMasakari({
      venv,
      authUrl: sim.authUrl,
      username: c.OS_USERNAME as string,
      password: c.OS_PASSWORD as string,
      projectName: c.OS_PROJECT_NAME as string,
    });
    const ns = await useNamespace('import');
    ctx = { sim, ref, ns, kube: createKubeClient(ns.kc), seg: {}, host: {}, segmentMark: 0 };
  } catch (e) {
    await ref?.stop();
    await sim.stop();
    throw e;
  }

  // Masakari: the four recovery methods, one segment disabled (microversion 1.2), descriptions.
  ctx.seg.auto = await createSegment({
    name: 'seg-auto',
    service_type: 'COMPUTE',
    recovery_method: 'auto',
    description: 'first',
  });
  ctx.seg.rh = await createSegment({ name: 'seg-rh', service_type: 'COMPUTE', recovery_method: 'reserved_host' });
  ctx.seg.ap = await createSegment({
    name: 'seg-ap',
    service_type: 'COMPUTE',
    recovery_method: 'auto_priority',
    description: 'line one\nline two',
  });
  ctx.seg.rhp = await createSegment(
    { name: 'seg-rhp', service_type: 'compute', recovery_method: 'rh_priority', enabled: false },
    '1.2',
  );
  const host = (name: string, extra: Json = {}) => ({
    name,
    type: 'COMPUTE',
    control_attributes: 'SSH',
    ...extra,
  });
  ctx.host['compute-1'] = await createHost(ctx.seg.auto, host('compute-1'));
  ctx.host['compute-2'] = await createHost(ctx.seg.rh, host('compute-2', { reserved: true }));
  ctx.host['compute-3'] = await createHost(ctx.seg.rh, host('compute-3', { control_attributes: 'IPMI user=x' }));
  ctx.host['compute-4'] = await createHost(ctx.seg.ap, host('compute-4', { on_maintenance: true }));
  ctx.host['compute-5'] = await createHost(ctx.seg.rhp, host('compute-5', { reserved: true, on_maintenance: true }));

  // The namespace already has a segment of its own, which took id 1: the source's segment 1 must get a new id.
  const repo = standaloneStore({
    kube: ctx.kube,
    namespace: ctx.ns.namespace,
    config: (() => {
      const { config } = loadConfig({ env: {} });
      return { ...config, operator: { ...config.operator, id_block_size: 1 } };
    })(),
    log: pino({ level: 'silent' }),
  });
  await repo.start();
  try {
    const local = await repo.createSegment({
      name: 'local-only',
      service_type: 'COMPUTE',
      recovery_method: 'auto',
      description: null,
      enabled: true,
    });
    assert.is(local.id, 1);
  } finally {
    await repo.stop();
  }
  // The allocator reserves its next block in the background (src/store/ids.ts): read the mark once it
  // has stopped moving, or a reservation landing after the read makes a "kept" source id a used one.
  const mark = async () =>
    Number(
      (await ctx.kube.get<{ data: { next: string } }>(RESOURCES.configMaps, ctx.ns.namespace, 'masakari-ids-segments'))
        .data.next,
    );
  let seen = await mark();
  for (let i = 0; i < 20; i++) {
    await new Promise((r) => setTimeout(r, 250));
    const now = await mark();
    if (now === seen) break;
    seen = now;
  }
  ctx.segmentMark = seen;
  assert.ok(
    ctx.segmentMark > 1 && ctx.segmentMark < 4,
    `the sequence stays below the source's last ids (${ctx.segmentMark})`,
  );
}

t.after(async () => {
  await ctx?.kube.close();
  await ctx?.ns.cleanup();
  await ctx?.ref.stop();
  await ctx?.sim.stop();
});

t('--dry-run prints the plan and writes nothing', async () => {
  const before = await versions();
  const r = await runImport('--dry-run');
  assert.is(r.code, 0, r.stderr + r.stdout);
  assert.match(r.stdout, /dry run: nothing written/);
  for (const name of ['seg-auto', 'seg-rh', 'seg-ap', 'seg-rhp', 'compute-1', 'compute-5']) {
    assert.match(r.stdout, new RegExp(`\\b${name}\\b.*\\bcreate\\b`), name);
  }
  assert.match(r.stdout, /local-only.*leave alone/);
  assert.match(r.stdout, /id 1 is already used in the namespace: new id \d+/);
  assert.match(r.stdout, /Not imported: notifications/);
  assert.equal(await versions(), before);
});

t('the import creates every segment and host with its uuid, id and fields', async () => {
  const r = await runImport();
  assert.is(r.code, 0, r.stderr + r.stdout);
  assert.match(r.stdout, /segments: 4 created, 1 left alone/);
  assert.match(r.stdout, /hosts {3}: 5 created/);

  const { segments, hosts } = await crs();
  assert.is(segments.length, 5);
  assert.is(hosts.length, 5);
  const ref = (await masakari('GET', '/segments')).json.segments as Json[];
  for (const s of ref) {
    const cr = byUuid(segments, s.uuid as string);
    assert.ok(cr, `segment ${s.name as string} imported`);
    assert.is(cr.status?.uuid, s.uuid);
    // Source id 1 is local-only's and ids below the mark were handed out: those get new ids, the others keep theirs.
    const id = s.id as number;
    if (id === 1 || id < ctx.segmentMark) {
      assert.ok((cr.status?.id ?? 0) >= 5, `${s.name as string}: new id after the kept ones, got ${cr.status?.id}`);
      assert.match(r.stdout, new RegExp(`${s.name as string} .* ${id}->${cr.status?.id} .*new id ${cr.status?.id}`));
    } else {
      assert.is(cr.status?.id, id, `id of ${s.name as string} kept`);
    }
    assert.is(cr.metadata.labels?.[LABELS.id], String(cr.status?.id));
    assert.equal(
      {
        name: cr.spec.name,
        service_type: cr.spec.serviceType,
        recovery_method: cr.spec.recoveryMethod,
        description: cr.spec.description ?? null,
        enabled: cr.spec.enabled,
      },
      {
        name: s.name,
        service_type: s.service_type,
        recovery_method: s.recovery_method,
        description: s.description,
        enabled: s.enabled,
      },
    );
    assert.is(cr.metadata.annotations?.[ANNOTATIONS.importedFrom], `${ctx.ref.url}/v1`);
  }
  for (const [name, uuid] of Object.entries(ctx.host)) {
    const cr = byUuid(hosts, uuid);
    assert.ok(cr, `host ${name} imported`);
    const h = (await masakari('GET', `/segments/${cr.metadata.labels?.[LABELS.segmentUuid]}/hosts/${uuid}`)).json
      .host as Json;
    assert.is(cr.status?.id, h.id, `host ids are all free, so all kept (${name})`);
    assert.is(cr.status?.segmentUuid, h.failover_segment_id);
    assert.equal(
      [cr.spec.name, cr.spec.type, cr.spec.controlAttributes, cr.status?.reserved, cr.status?.onMaintenance],
      [h.name, h.type, h.control_attributes, h.reserved, h.on_maintenance],
    );
  }
});

t('our facade lists what the reference lists, uuid for uuid', async () => {
  let operator: OperatorProcess | undefined;
  try {
    operator = await startOperator({
      kubeconfigPath: ctx.ns.kubeconfigPath,
      namespace: ctx.ns.namespace,
      components: 'api',
      auth: 'noauth2',
      openstack: ctx.sim.credentials,
    });
    const ours = await listings(operator.apiUrl);
    const theirs = await listings(ctx.ref.url);
    const localOnly = Object.keys(ours).filter((uuid) => !(uuid in theirs));
    assert.is(localOnly.length, 1, 'only local-only is extra');
    for (const [uuid, record] of Object.entries(theirs)) {
      const mine = ours[uuid];
      assert.ok(mine, `facade lists ${uuid}`);
      // Remapped segment ids show up in the segment and in its hosts' failover_segment: compare the rest.
      const sourceIdOf = (s: Json) => (theirs[s.uuid as string] as Json).id;
      const remap = (j: Json): Json =>
        'failover_segment' in j
          ? { ...j, failover_segment: { ...(j.failover_segment as Json), id: sourceIdOf(j.failover_segment as Json) } }
          : 'recovery_method' in j
            ? { ...j, id: sourceIdOf(j) }
            : j;
      assert.equal(remap(mine), record, `record ${uuid}`);
    }
  } finally {
    await operator?.stop();
  }
});

t('a second run changes nothing (reading through the catalog form .../v1/<project id>)', async () => {
  const before = await versions();
  const r = await runImport('--from', `${ctx.ref.url}/v1/0123456789abcdef0123456789abcdef`);
  assert.is(r.code, 0, r.stderr + r.stdout);
  assert.match(r.stdout, /segments: 4 unchanged, 1 left alone/);
  assert.match(r.stdout, /hosts {3}: 5 unchanged/);
  assert.equal(await versions(), before);
});

t('a change in Masakari is carried over by the next run, never duplicated', async () => {
  assert.is(
    (await masakari('PUT', `/segments/${ctx.seg.ap}`, { segment: { name: 'seg-ap-renamed', description: 'changed' } }))
      .status,
    200,
  );
  assert.is(
    (await masakari('PUT', `/segments/${ctx.seg.rh}/hosts/${ctx.host['compute-2']}`, { host: { reserved: false } }))
      .status,
    200,
  );
  const r = await runImport();
  assert.is(r.code, 0, r.stderr + r.stdout);
  assert.match(
    r.stdout,
    /seg-ap-renamed .*updated.*name: "seg-ap" -> "seg-ap-renamed"; description: "line one\\nline two" -> "changed"/,
  );
  assert.match(r.stdout, /compute-2 .*updated.*reserved: true -> false/);
  assert.match(r.stdout, /segments: 1 updated, 3 unchanged, 1 left alone/);

  const { segments, hosts } = await crs();
  assert.is(segments.length, 5);
  assert.is(hosts.length, 5);
  const ap = byUuid(segments, ctx.seg.ap as string);
  assert.is(ap?.spec.name, 'seg-ap-renamed');
  assert.is(ap?.spec.description, 'changed');
  const c2 = byUuid(hosts, ctx.host['compute-2'] as string);
  assert.equal([c2?.spec.reserved, c2?.status?.reserved], [false, false]);
  // The old name is free again: its claim was released.
  const claim = await ctx.kube.get(RESOURCES.configMaps, ctx.ns.namespace, claimObjectName('segment', 'seg-ap')).then(
    () => 'present',
    () => 'absent',
  );
  assert.is(claim, 'absent');
});

t('a name held by an object only the namespace has fails that object, exit 1', async () => {
  const uuid = await createSegment({ name: 'local-only', service_type: 'COMPUTE', recovery_method: 'auto' });
  const before = await versions();
  const r = await runImport();
  assert.is(r.code, 1, r.stdout);
  assert.match(
    r.stdout,
    new RegExp(`local-only .*${uuid}.*failed.*segment name "local-only" is already used by segment`),
  );
  assert.match(r.stdout, /1 object\(s\) failed/);
  assert.equal(await versions(), before);
});

t('--verify-hosts refuses a host Nova no longer knows, in the plan and in the run', async () => {
  const gone = await createHost(ctx.seg.auto as string, {
    name: 'compute-6',
    type: 'COMPUTE',
    control_attributes: 'SSH',
  });
  ctx.sim.state.removeHost('compute-6');
  for (const mode of [['--dry-run'], []]) {
    const r = await runImportWith(ctx.sim.credentials, '--verify-hosts', ...mode);
    assert.is(r.code, 1, r.stdout + r.stderr);
    assert.match(
      r.stdout,
      new RegExp(`compute-6 .*${gone}.*(error|failed) +Nova has no nova-compute service on host "compute-6"`),
    );
    assert.match(r.stdout, /compute-1 .*unchanged|compute-1 .*skip/);
  }
  assert.is(byUuid((await crs()).hosts, gone), undefined);
});

t('a namespace that does not exist stops the run with one clear message', async () => {
  for (const mode of [['--dry-run'], []]) {
    const r = await runImport('--namespace', 'no-such-namespace-0', ...mode);
    assert.is(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stderr, /namespace no-such-namespace-0 or the masakari\.openkeel\.io CRDs do not exist/);
  }
});

t.run();
