// Shared set-up of the integration tests that run the operator's components
// (engine, detection, remediator) as a process does, over the store: a fresh
// namespace on the test control plane, the Nova simulator with the segment's
// hosts, the segment and its hosts registered through the store (admitted as
// the REST API's are), and the AppContext each component is created with.
// The engine's own tests write their objects directly (test/integration/engine/support.ts).
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { eventually } from './eventually.ts';
import { useNamespace } from './cluster.ts';
import type { TestNamespace } from './cluster.ts';
import { fastConfig } from '../integration/engine/support.ts';
import type { ContextWithoutManager } from '../../src/testing/component.ts';
import type { Config } from '../../src/config/config.ts';
import { createKubeClient } from '../../src/k8s/kube-client.ts';
import type { KubeClient, ResourceRef } from '../../src/k8s/client.ts';
import { isAlreadyExists } from '../../src/k8s/client.ts';
import { RESOURCES } from '../../src/k8s/resources.ts';
import type { FailoverSegment, Notification } from '../../src/model/types.ts';
import { createNovaClient } from '../../src/openstack/index.ts';
import type { HttpNovaClient } from '../../src/openstack/index.ts';
import { Manager } from '../../src/runtime/manager.ts';
import { standaloneStore } from '../../src/testing/store.ts';
import type { CrRepositoryHandle } from '../../src/store/index.ts';
import { startSimulator } from '../../tools/simulator/server.ts';
import type { Simulator } from '../../tools/simulator/server.ts';
import type { SimServerInput } from '../../tools/simulator/records.ts';

const log = pino({ level: process.env.MASAKARI_TEST_LOG ?? 'silent' });

export interface ComponentEnvOptions {
  /** Prefix of the test namespace. */
  namespace: string;
  /** The one segment's name. */
  segment: string;
  /** Its compute hosts: in the simulator and registered in the segment. */
  hosts: string[];
  servers?: SimServerInput[];
  /** Hosts registered on maintenance. */
  onMaintenance?: string[];
  /** The segment's fields that only kubectl and GitOps set (detection, returnToService), patched onto it. */
  segmentSpec?: Pick<FailoverSegment['spec'], 'detection' | 'returnToService'>;
}

export interface ComponentEnv {
  ns: TestNamespace;
  kube: KubeClient;
  sim: Simulator;
  nova: HttpNovaClient;
  store: CrRepositoryHandle;
  config: Config;
  /** The segment's object name. */
  segmentName: string;
  /** Aborted by close(): every component's process signal. */
  stop: AbortController;
  /**
   * What a component is created with, as the process gives it, but the manager: startComponent adds one, or the
   * test gives its own (managerWithHold). Each gets its own metrics unless given one.
   */
  appContext(identity: string, metrics?: Registry): ContextWithoutManager;
  /** Stops the components (in this order), the store, the simulator and the namespace. */
  close(...components: ({ stop(): Promise<void> } | undefined)[]): Promise<void>;
}

export async function componentEnv(o: ComponentEnvOptions): Promise<ComponentEnv> {
  const ns = await useNamespace(o.namespace);
  const kube = createKubeClient(ns.kc);
  const sim = await startSimulator({ hosts: o.hosts, ...(o.servers ? { servers: o.servers } : {}) });
  const nova = createNovaClient(sim.clientCredentials, { timeoutMs: 5_000, maxRetries: 1 });
  const config = fastConfig();
  const store = standaloneStore({ kube, namespace: ns.namespace, config, log });
  await store.start();
  const segment = await store.createSegment({
    name: o.segment,
    service_type: 'COMPUTE',
    recovery_method: 'auto',
    description: null,
    enabled: true,
  });
  for (const name of o.hosts) {
    await store.createHost(segment.uuid, {
      name,
      type: 'COMPUTE',
      control_attributes: 'SSH',
      reserved: false,
      on_maintenance: o.onMaintenance?.includes(name) ?? false,
    });
  }
  if (o.segmentSpec) {
    await kube.mergePatch(RESOURCES.segments, ns.namespace, segment.k8sName, { spec: o.segmentSpec });
  }
  await eventually(
    `the ${ns.namespace} hahosts to be admitted`,
    async () => store.listHosts().length,
    (n) => n === o.hosts.length,
  );
  const stop = new AbortController();
  return {
    ns,
    kube,
    sim,
    nova,
    store,
    config,
    segmentName: segment.k8sName,
    stop,
    appContext: (identity, metrics = new Registry()) => ({
      config,
      namespace: ns.namespace,
      kube,
      nova,
      log: log.child({ identity }),
      metrics,
      identity,
      signal: stop.signal,
    }),
    async close(...components) {
      stop.abort();
      for (const c of components) await c?.stop();
      await store.stop();
      await nova.session.close();
      sim.state.clearTimers();
      await sim.stop();
      await ns.cleanup();
    },
  };
}

/** Creates the object unless it exists (cluster-wide objects outlive a test file's namespace). */
export async function createIfAbsent(
  kube: KubeClient,
  ref: ResourceRef,
  namespace: string | undefined,
  body: unknown,
): Promise<void> {
  try {
    await kube.create(ref, namespace, body);
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
  }
}

/** A namespaced CRD of `group`/v1alpha1 that keeps any field: a stand-in for another operator's kind. */
export const openCrd = (group: string, kind: string, plural: string) => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `${plural}.${group}` },
  spec: {
    group,
    scope: 'Namespaced',
    names: { kind, plural, singular: kind.toLowerCase(), listKind: `${kind}List` },
    versions: [
      {
        name: 'v1alpha1',
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      },
    ],
  },
});

/** Resolves once the API server lists `ref` (a CRD just created is served a moment later). */
export async function untilServed(kube: KubeClient, ref: ResourceRef, namespace: string | undefined): Promise<void> {
  await eventually(
    `the ${ref.plural} CRD to be served`,
    () =>
      kube.list(ref, namespace).then(
        () => true,
        () => false,
      ),
    (ok) => ok,
  );
}

/** The notifications of one host, in the env's namespace. */
export const notificationsOf = async (env: { kube: KubeClient; ns: TestNamespace }, host: string) =>
  (await env.kube.list<Notification>(RESOURCES.notifications, env.ns.namespace)).items.filter(
    (n) => n.spec.hostname === host,
  );

/** A metric's value: the sample whose labels include `labels`. */
export async function metricValue(
  registry: Registry,
  name: string,
  labels: Record<string, string> = {},
): Promise<number | undefined> {
  const m = (await registry.getMetricsAsJSON()).find((x) => x.name === name);
  return m?.values.find((v) => Object.entries(labels).every(([k, val]) => v.labels[k] === val))?.value;
}

/** Resolves after the detection leader reporting to `metrics` has made `n` more trusted looks. */
export async function detectionLooks(metrics: Registry, n: number): Promise<void> {
  const looks = () => metricValue(metrics, 'masakari_detection_polls_total', { result: 'ok' });
  const start = (await looks()) ?? 0;
  await eventually(`${n} more looks`, looks, (v) => (v ?? 0) >= start + n);
}

/**
 * A process manager (AppContext.manager) that leads every Lease at once, with a hold the test controls:
 * `hold.good = false` is a replica stalled past its renew deadline, still in its term (Manager.holdsLease
 * false). The caller starts it once its components are created, and stops it.
 */
export function managerWithHold(env: ComponentEnv, identity: string): { manager: Manager; hold: { good: boolean } } {
  const hold = { good: true };
  const manager = new Manager({
    kube: env.kube,
    namespace: env.ns.namespace,
    identity,
    log: log.child({ identity }),
    runLeader: ({ lead, signal }) => lead(signal, { held: () => hold.good }),
  });
  return { manager, hold };
}
