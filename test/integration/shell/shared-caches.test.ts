// The all-in-one process (api, engine, remediation, detection) against the test control
// plane, with its Kubernetes client wrapped to count and break requests:
//   - it opens one watch per kind, shared by every component; the engine's
//     notification watch (unfinished only) is the one deliberate second;
//   - a remediator-only process never watches every notification: once it
//     files for a segment namespace, it watches COMPUTE_HOST ones only;
//   - a first sync that keeps failing is retried until it succeeds: not
//     ready meanwhile, never not alive;
//   - a watch that keeps failing (403, as after an RBAC change) makes the
//     process not ready; it is ready again once the watch works.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { randomBytes } from 'node:crypto';
import { freePort } from '../../../tools/controlplane/ports.ts';
import { KubeError } from '../../../src/k8s/client.ts';
import type { KubeClient } from '../../../src/k8s/client.ts';
import { createKubeClient } from '../../../src/k8s/kube-client.ts';
import { REMEDIATION_RESOURCES, RESOURCES } from '../../../src/k8s/resources.ts';
import { UNFINISHED_FIELD_SELECTOR } from '../../../src/model/notification-phase.ts';
import type { MasakariRemediation } from '../../../src/model/remediation-types.ts';
import { COMPUTE_HOST_FIELD_SELECTOR } from '../../../src/store/caches.ts';
import { runOperator } from '../../../src/app/run.ts';
import { useNamespace } from '../../support/cluster.ts';
import type { TestNamespace } from '../../support/cluster.ts';
import { eventually } from '../../support/eventually.ts';

const t = suite<{ ns: TestNamespace }>('shared caches in one process');
t.before(async (ctx) => {
  ctx.ns = await useNamespace('shared-caches');
});
t.after(async ({ ns }) => ns.cleanup());

/** The real client, counting open watches per (resource, field selector), and denying a resource on demand. */
function instrumented(real: KubeClient) {
  const open = new Map<string, number>();
  const denied = new Set<string>();
  const cutters = new Set<{ plural: string; cut: AbortController }>();
  const client = Object.create(real) as KubeClient;
  const deny = (plural: string) => {
    if (denied.has(plural)) throw new KubeError(403, 'Forbidden', `${plural} is forbidden (test)`);
  };
  client.list = async (ref, ns, opts) => {
    deny(ref.plural);
    return real.list(ref, ns, opts);
  };
  // The informers' paged lists read through listKept (src/k8s/list-items.ts): denied alike.
  client.listKept = async (ref, ns, opts, keep) => {
    deny(ref.plural);
    return real.listKept!(ref, ns, opts, keep);
  };
  client.watch = async (ref, ns, opts, onEvent, signal) => {
    deny(ref.plural);
    const key = `${ref.plural}${opts.fieldSelector ? `?${opts.fieldSelector}` : ''}`;
    open.set(key, (open.get(key) ?? 0) + 1);
    const entry = { plural: ref.plural, cut: new AbortController() };
    cutters.add(entry);
    try {
      return await real.watch(ref, ns, opts, onEvent, AbortSignal.any([signal, entry.cut.signal]));
    } finally {
      cutters.delete(entry);
      open.set(key, (open.get(key) ?? 1) - 1);
      if (open.get(key) === 0) open.delete(key);
    }
  };
  /** Ends the open watches of a resource, as a connection reset would (the next request is authorized anew). */
  const cut = (plural: string) => {
    for (const c of cutters) if (c.plural === plural) c.cut.abort();
  };
  return { client, open, denied, cut };
}

async function probe(url: string): Promise<number> {
  try {
    return (await fetch(url, { signal: AbortSignal.timeout(5_000) })).status;
  } catch {
    return 0;
  }
}

t('one watch per kind in the all-in-one process; readiness follows failing syncs and watches', async ({ ns }) => {
  const real = createKubeClient(ns.kc, { timeoutMs: 10_000, userAgent: 'masakari-operator-test/shared-caches' });
  const kube = instrumented(real);
  const opsPort = await freePort();
  const apiPort = await freePort();
  let stop!: (signal: string) => void;
  const shutdownRequested = new Promise<string>((r) => (stop = r));
  // The first sync of the hosts cache fails until the test lets it through.
  kube.denied.add('hahosts');
  const logs: string[] = [];
  const run = runOperator({
    env: {
      MASAKARI_COMPONENTS: 'api,engine,remediation,detection',
      MASAKARI_NAMESPACE: ns.namespace,
      MASAKARI_LISTEN: `127.0.0.1:${apiPort}`,
      MASAKARI_METRICS_LISTEN: `127.0.0.1:${opsPort}`,
      MASAKARI_AUTH_STRATEGY: 'noauth2',
      MASAKARI_LOG_LEVEL: 'info',
    },
    shutdownRequested,
    // Kept, and printed only when the test fails.
    logDestination: { write: (line: string) => void logs.push(line) },
    connectKube: () => ({ client: kube.client, close: () => real.close() }),
    informerDeps: { staleAfterMs: 1_500, healthyAfterMs: 1_000, backoff: { delayMs: 50, capMs: 500 } },
  });
  const ops = `http://127.0.0.1:${opsPort}`;
  try {
    await eventually(
      '/healthz 200',
      () => probe(`${ops}/healthz`),
      (s) => s === 200,
      30_000,
    );
    // Well past one backoff period: still retrying, not ready, alive.
    await new Promise((r) => setTimeout(r, 2_000));
    assert.is(await probe(`${ops}/readyz`), 503, 'not ready while the first sync fails');
    assert.is(await probe(`${ops}/healthz`), 200, 'alive: retrying can help');
    kube.denied.delete('hahosts');
    await eventually(
      '/readyz 200',
      () => probe(`${ops}/readyz`),
      (s) => s === 200,
      60_000,
    );

    // No ConfigMap watch: no cache keeps journal pages (src/store/slim-notification.ts: no history is cached).
    assert.equal(Object.fromEntries([...kube.open].sort()), {
      failoversegments: 1,
      hahosts: 1,
      masakariremediations: 1,
      notifications: 1,
      [`notifications?${UNFINISHED_FIELD_SELECTOR}`]: 1,
    });

    // An RBAC change takes the hosts away: the watch and every relist now fail.
    kube.denied.add('hahosts');
    kube.cut('hahosts');
    await eventually(
      '/readyz 503',
      () => probe(`${ops}/readyz`),
      (s) => s === 503,
      30_000,
    );
    assert.is(await probe(`${ops}/healthz`), 200);
    kube.denied.delete('hahosts');
    await eventually(
      '/readyz 200',
      () => probe(`${ops}/readyz`),
      (s) => s === 200,
      30_000,
    );
    assert.is(kube.open.get('hahosts'), 1, 'still one hosts watch');
  } catch (e) {
    process.stderr.write(logs.slice(-80).join(''));
    throw e;
  } finally {
    stop('SIGTERM');
    assert.is(await run, 0);
  }
});

t('a remediator-only process watches COMPUTE_HOST notifications only, and only once it files', async ({ ns }) => {
  const real = createKubeClient(ns.kc, { timeoutMs: 10_000, userAgent: 'masakari-operator-test/shared-caches' });
  const kube = instrumented(real);
  const opsPort = await freePort();
  let stop!: (signal: string) => void;
  const shutdownRequested = new Promise<string>((r) => (stop = r));
  const logs: string[] = [];
  const run = runOperator({
    env: {
      MASAKARI_COMPONENTS: 'remediation',
      MASAKARI_NAMESPACE: ns.namespace,
      MASAKARI_METRICS_LISTEN: `127.0.0.1:${opsPort}`,
      MASAKARI_AUTH_STRATEGY: 'noauth2',
      MASAKARI_LOG_LEVEL: 'info',
    },
    shutdownRequested,
    logDestination: { write: (line: string) => void logs.push(line) },
    connectKube: () => ({ client: kube.client, close: () => real.close() }),
  });
  // Nodes are cluster-wide: a per-run name.
  const node = `shared-caches-${randomBytes(3).toString('hex')}`;
  try {
    await eventually(
      '/readyz 200',
      () => probe(`http://127.0.0.1:${opsPort}/readyz`),
      (s) => s === 200,
      60_000,
    );
    assert.equal(Object.fromEntries(kube.open), { masakariremediations: 1 }, 'nothing else before it files');

    // A remediation for a Node whose compute host is not registered: the remediator opens the
    // segment namespace's store to look the host up, and ends with HostNotFound.
    await real.create(RESOURCES.nodes, undefined, { apiVersion: 'v1', kind: 'Node', metadata: { name: node } });
    const created = await real.create<Partial<MasakariRemediation>>(REMEDIATION_RESOURCES.remediations, ns.namespace, {
      apiVersion: 'masakari.openkeel.io/v1alpha1',
      kind: 'MasakariRemediation',
      metadata: { name: node, annotations: { 'remediation.medik8s.io/node-name': node } },
      spec: {},
    });
    await eventually(
      'the remediation to finish (host not found)',
      () => real.get<MasakariRemediation>(REMEDIATION_RESOURCES.remediations, ns.namespace, created.metadata!.name!),
      (r) => r.status?.conditions?.some((c) => c.type === 'Succeeded' && c.status === 'False') ?? false,
      30_000,
    );
    assert.equal(Object.fromEntries([...kube.open].sort()), {
      failoversegments: 1,
      hahosts: 1,
      masakariremediations: 1,
      [`notifications?${COMPUTE_HOST_FIELD_SELECTOR}`]: 1,
    });
  } catch (e) {
    process.stderr.write(logs.slice(-80).join(''));
    throw e;
  } finally {
    stop('SIGTERM');
    assert.is(await run, 0);
    await real.delete(RESOURCES.nodes, undefined, node).catch(() => undefined);
  }
});

t.run();
