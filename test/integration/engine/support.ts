// Shared set-up for the engine's integration tests: a fresh namespace on the
// real control plane, the Nova simulator, segment/host/notification custom
// resources written the way the store admits them (status uuid, id, source
// host), and engine components started in this process.

import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { useNamespace } from '../../support/cluster.ts';
import type { TestNamespace } from '../../support/cluster.ts';
import type { Component } from '../../../src/app/component.ts';
import type { Config } from '../../../src/config/config.ts';
import { loadConfig } from '../../../src/config/load.ts';
import { createComponent } from '../../../src/engine/component.ts';
import type { KubeClient } from '../../../src/k8s/client.ts';
import { createKubeClient } from '../../../src/k8s/kube-client.ts';
import { RESOURCES } from '../../../src/k8s/resources.ts';
import { API_VERSION } from '../../../src/model/constants.ts';
import type {
  FailoverSegment,
  HaHost,
  Notification,
  NotificationStatus,
  NotificationType,
  RecoveryMethod,
} from '../../../src/model/types.ts';
import { createNovaClient } from '../../../src/openstack/index.ts';
import type { NovaClient } from '../../../src/openstack/types.ts';
import * as assert from 'uvu/assert';
import { startSimulator } from '../../../tools/simulator/server.ts';
import { assembleNotification, countedPages, notificationUuidOf, readPages } from '../../../src/store/journal-pages.ts';
import type { Simulator } from '../../../tools/simulator/server.ts';

/** Masakari's timings shrunk so a test takes seconds; the semantics are the same. */
export function fastConfig(mutate?: (c: Config) => void): Config {
  const c = loadConfig({ env: {} }).config;
  c.DEFAULT.verify_interval = 1;
  c.DEFAULT.wait_period_after_service_update = 20;
  c.DEFAULT.wait_period_after_evacuation = 20;
  c.DEFAULT.wait_period_after_power_off = 10;
  c.DEFAULT.wait_period_after_power_on = 10;
  c.DEFAULT.process_unfinished_notifications_interval = 2;
  c.DEFAULT.retry_notification_new_status_interval = 60;
  c.DEFAULT.check_expired_notifications_interval = 2;
  c.operator.openstack_request_timeout = 5;
  c.operator.openstack_max_retries = 1;
  c.operator.lease_duration = 4;
  c.operator.renew_deadline = 3;
  c.operator.retry_period = 1;
  mutate?.(c);
  return c;
}

export interface RunningEngine {
  identity: string;
  component: Component;
  metrics: Registry;
  /** Graceful stop (releases the lease). */
  stop(): Promise<void>;
}

export interface EngineEnv {
  ns: TestNamespace;
  namespace: string;
  kube: KubeClient;
  sim: Simulator;
  nova: NovaClient;
  segment(
    name: string,
    o?: { recoveryMethod?: RecoveryMethod; enabled?: boolean; requireFencing?: boolean },
  ): Promise<{ name: string; uuid: string }>;
  host(
    name: string,
    segment: { name: string; uuid: string },
    o?: { reserved?: boolean },
  ): Promise<{ name: string; uuid: string }>;
  notify(
    type: NotificationType,
    hostname: string,
    payload: Record<string, string>,
    o?: { admit?: boolean; generatedTime?: string },
  ): Promise<string>;
  /** Does what the store's reconciler does for a kubectl-created notification: assigns uuid, id and source host. */
  admit(name: string): Promise<void>;
  startEngine(identity: string, o?: { config?: Config; nova?: NovaClient | null }): Promise<RunningEngine>;
  /** The notification with its whole status (journal pages included). */
  get(name: string): Promise<Notification>;
  getHost(name: string): Promise<HaHost>;
  close(): Promise<void>;
}

/** What a host monitor sends when a compute host is down: a COMPUTE_HOST STOPPED payload Masakari recovers. */
export const HOST_DOWN = { event: 'STOPPED', host_status: 'NORMAL', cluster_status: 'OFFLINE' };

const log = pino({ level: process.env.MASAKARI_TEST_LOG ?? 'silent' });
let nextId = 1;

export async function engineEnv(
  prefix: string,
  simHosts: string[] = ['compute-1', 'compute-2', 'compute-3'],
): Promise<EngineEnv> {
  const ns = await useNamespace(prefix);
  const kube = createKubeClient(ns.kc);
  const sim = await startSimulator({ hosts: simHosts });
  const nova = createNovaClient(sim.clientCredentials, { timeoutMs: 5_000, maxRetries: 1 });
  const namespace = ns.namespace;
  const hosts = new Map<string, { uuid: string; segmentUuid: string }>();
  const engines: RunningEngine[] = [];

  const env: EngineEnv = {
    ns,
    namespace,
    kube,
    sim,
    nova,
    async segment(name, o = {}) {
      const uuid = randomUUID();
      const created = await kube.create<FailoverSegment>(RESOURCES.segments, namespace, {
        apiVersion: API_VERSION,
        kind: 'FailoverSegment',
        metadata: { name },
        spec: {
          name,
          recoveryMethod: o.recoveryMethod ?? 'auto',
          serviceType: 'COMPUTE',
          enabled: o.enabled ?? true,
          ...(o.requireFencing ? { requireFencing: true } : {}),
        },
      });
      await kube.replaceStatus(RESOURCES.segments, namespace, name, { ...created, status: { uuid, id: nextId++ } });
      return { name, uuid };
    },
    async host(name, segment, o = {}) {
      const uuid = randomUUID();
      const k8sName = `host-${name}`;
      const created = await kube.create<HaHost>(RESOURCES.hosts, namespace, {
        apiVersion: API_VERSION,
        kind: 'HaHost',
        metadata: { name: k8sName },
        spec: {
          name,
          segmentRef: { name: segment.name },
          type: 'COMPUTE',
          controlAttributes: 'SSH',
          reserved: o.reserved ?? false,
          onMaintenance: false,
        },
      });
      await kube.replaceStatus(RESOURCES.hosts, namespace, k8sName, {
        ...created,
        status: { uuid, id: nextId++, segmentUuid: segment.uuid },
      });
      hosts.set(name, { uuid, segmentUuid: segment.uuid });
      return { name, uuid };
    },
    async notify(type, hostname, payload, o = {}) {
      const name = `n-${randomUUID().slice(0, 8)}`;
      await kube.create<Notification>(RESOURCES.notifications, namespace, {
        apiVersion: API_VERSION,
        kind: 'Notification',
        metadata: { name },
        spec: {
          type,
          hostname,
          generatedTime: o.generatedTime ?? new Date().toISOString().replace(/\.\d+Z$/, ''),
          payload,
        },
      });
      if (o.admit !== false) await env.admit(name);
      return name;
    },
    async admit(name) {
      const n = await kube.get<Notification>(RESOURCES.notifications, namespace, name);
      const h = hosts.get(n.spec.hostname);
      if (!h) throw new Error(`unknown host ${n.spec.hostname}`);
      await kube.replaceStatus(RESOURCES.notifications, namespace, name, {
        ...n,
        status: {
          ...n.status,
          uuid: randomUUID(),
          id: nextId++,
          sourceHostUuid: h.uuid,
          failoverSegmentUuid: h.segmentUuid,
        },
      });
    },
    async startEngine(identity, o = {}) {
      const metrics = new Registry();
      const stopping = new AbortController();
      const chosen = o.nova === null ? undefined : (o.nova ?? nova);
      const component = await startComponent(
        {
          config: o.config ?? fastConfig(),
          namespace,
          kube,
          ...(chosen ? { nova: chosen } : {}),
          log: log.child({ engine: identity }),
          metrics,
          identity,
          signal: stopping.signal,
        },
        createComponent,
      );
      let stopped = false;
      const running: RunningEngine = {
        identity,
        component,
        metrics,
        async stop() {
          if (stopped) return;
          stopped = true;
          stopping.abort();
          await component.stop();
        },
      };
      engines.push(running);
      await eventually(
        `${identity} ready`,
        () => component.ready(),
        (r) => r,
      );
      return running;
    },
    // As the API presents it: with the history its journal pages hold (src/store/journal-pages.ts).
    get: async (name) => {
      const n = await kube.get<Notification>(RESOURCES.notifications, namespace, name);
      if (countedPages(n.status) === 0) return n;
      return assembleNotification(n, await readPages(kube, namespace, notificationUuidOf(n)));
    },
    getHost: (name) => kube.get<HaHost>(RESOURCES.hosts, namespace, `host-${name}`),
    async close() {
      await Promise.allSettled(engines.map((e) => e.stop()));
      await sim.stop();
      await ns.cleanup();
    },
  };
  return env;
}

export { eventually } from '../../support/eventually.ts';
import { eventually } from '../../support/eventually.ts';
import { startComponent } from '../../../src/testing/component.ts';

/** Waits until the notification reaches one of `phases` and returns it. */
export function waitPhase(
  env: EngineEnv,
  name: string,
  phases: NotificationStatus | NotificationStatus[],
  timeoutMs = 30_000,
): Promise<Notification> {
  const want = Array.isArray(phases) ? phases : [phases];
  return eventually(
    `${name} in ${want.join('|')}`,
    () => env.get(name),
    (n) => want.includes(n.status?.phase ?? 'new'),
    timeoutMs,
  );
}

export const phaseOf = (n: Notification): NotificationStatus => n.status?.phase ?? 'new';
export const lastError = (n: Notification): string | undefined =>
  (n.status?.engine as { lastError?: string } | undefined)?.lastError;

/**
 * The exactly-once guarantee of a host recovery: the simulator accepted one
 * evacuate per server, none is left locked, and (given the failed host) none
 * is still on it.
 */
export function assertEvacuatedOnce(sim: Simulator, ids: readonly string[], failedHost?: string): void {
  for (const id of ids) {
    assert.is(sim.state.actionCounts.evacuate?.[id], 1, `evacuations of ${id}`);
    assert.is(sim.state.servers.get(id)?.locked, false, `${id} left locked`);
    if (failedHost !== undefined)
      assert.is.not(sim.state.servers.get(id)?.host, failedHost, `${id} still on ${failedHost}`);
  }
}
