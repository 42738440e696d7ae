// The host-failure workflow on the real journal: the engine core's
// createRunJournal + NotificationStatusWriter writing a Notification's status
// in a real kube-apiserver, Nova played by the simulator over HTTP. Checks
// that what the workflow journals survives in etcd in Masakari's shapes, and
// that a run cut off mid-evacuation (its writer and signal gone, as when the
// process dies) resumes from a fresh read of the object with every server
// evacuated exactly once and none left locked.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { pino } from 'pino';
import { useNamespace } from '../../support/cluster.ts';
import type { TestNamespace } from '../../support/cluster.ts';
import { createKubeClient } from '../../../src/k8s/kube-client.ts';
import type { KubeClient } from '../../../src/k8s/client.ts';
import { RESOURCES } from '../../../src/k8s/resources.ts';
import { API_VERSION } from '../../../src/model/constants.ts';
import type { Notification } from '../../../src/model/types.ts';
import { loadConfig } from '../../../src/config/load.ts';
import { createNovaClient } from '../../../src/openstack/index.ts';
import type { HttpNovaClient } from '../../../src/openstack/index.ts';
import { startSimulator } from '../../../tools/simulator/server.ts';
import type { Simulator } from '../../../tools/simulator/server.ts';
import { createRunJournal } from '../../../src/engine/run/journal.ts';
import { NotificationStatusWriter } from '../../../src/engine/status/writer.ts';
import type { HostFlags, StartFallbackRun, WorkflowContext } from '../../../src/engine/workflows/context.ts';
import { runHostFailure } from '../../../src/engine/workflows/host-failure.ts';
import { assertEvacuatedOnce, HOST_DOWN } from './support.ts';
import { systemClock } from '../../../src/time/clock.ts';

const FAILED = 'compute-1';
const UUID = '5b1c7d2e-8f3a-4b6c-9d0e-1f2a3b4c5d6e';
const SEGMENT_UUID = '0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d';
const log = pino({ level: process.env.MASAKARI_TEST_LOG ?? 'silent' });

interface Env {
  ns: TestNamespace;
  kube: KubeClient;
  sim: Simulator;
  nova: HttpNovaClient;
}

const test = suite<{ env?: Env }>('host-failure workflow on the real journal', {});

test.before(async (ctx) => {
  const ns = await useNamespace('host-failure');
  const sim = await startSimulator({ hosts: [FAILED, 'compute-2', 'compute-3'], latencyMs: { evacuate: 150 } });
  ctx.env = {
    ns,
    kube: createKubeClient(ns.kc),
    sim,
    nova: createNovaClient(sim.clientCredentials, { timeoutMs: 10_000, maxRetries: 2 }),
  };
});

test.after(async ({ env }) => {
  await env?.nova.session.close();
  env?.sim.state.clearTimers();
  await env?.sim.stop();
  await env?.ns.cleanup();
});

async function createRunningNotification(env: Env, name: string): Promise<Notification> {
  const created = await env.kube.create<Notification>(RESOURCES.notifications, env.ns.namespace, {
    apiVersion: API_VERSION,
    kind: 'Notification',
    metadata: { name },
    spec: {
      type: 'COMPUTE_HOST',
      hostname: FAILED,
      generatedTime: '2026-11-29T18:00:00Z',
      payload: { ...HOST_DOWN },
    },
  });
  return env.kube.replaceStatus<Notification>(RESOURCES.notifications, env.ns.namespace, name, {
    ...created,
    status: {
      uuid: UUID,
      phase: 'running',
      runs: 1,
      failoverSegmentUuid: SEGMENT_UUID,
      recoveryWorkflowDetails: [],
      vmoves: [],
    },
  });
}

const noFallback: StartFallbackRun = async () => {
  throw new Error('the auto method never falls back');
};

const noReservedHosts: HostFlags = {
  setOnMaintenance: async () => undefined,
  setReserved: async () => undefined,
  reservedHosts: () => [],
};

/** What the engine core builds for a run, from the object as read now. */
function contextFor(env: Env, n: Notification, signal: AbortSignal): WorkflowContext {
  const writer = new NotificationStatusWriter({
    kube: env.kube,
    namespace: env.ns.namespace,
    initial: n,
    guard: () => undefined,
    clock: systemClock,
    log,
    signal,
  });
  let id = 100 * (Number(n.metadata.resourceVersion) % 1000);
  const run = (n.status?.runs ?? 1) - 1;
  const journal = createRunJournal(writer, run, { next: async () => ++id }, systemClock);
  const config = loadConfig({ env: {} }).config;
  config.DEFAULT.verify_interval = 0.2;
  return {
    notification: {
      uuid: UUID,
      type: 'COMPUTE_HOST',
      hostname: FAILED,
      payload: n.spec.payload,
      generatedTime: n.spec.generatedTime,
      segmentUuid: SEGMENT_UUID,
      recoveryMethod: 'auto',
    },
    run,
    nova: env.nova,
    config,
    clock: systemClock,
    log,
    signal,
    requestId: 'req-host-failure-it',
    ...journal,
    hosts: noReservedHosts,
  };
}

test('auto recovery journals progress, vmoves and effects into the Notification status', async ({ env }) => {
  const e = env!;
  const ids = ['a', 'b', 'c', 'd'].map((name) => e.sim.state.addServer({ host: FAILED, name }).id);
  e.sim.state.failHost(FAILED);
  const n = await createRunningNotification(e, 'journal-ok');
  const ctx = contextFor(e, n, new AbortController().signal);
  await runHostFailure(ctx, noFallback);
  const stored = await e.kube.get<Notification>(RESOURCES.notifications, e.ns.namespace, 'journal-ok');
  const details = stored.status?.recoveryWorkflowDetails ?? [];
  assert.equal(
    details.map((d) => [d.name, d.state, d.progress]),
    [
      ['DisableComputeServiceTask', 'SUCCESS', 1],
      ['PrepareHAEnabledInstancesTask', 'SUCCESS', 1],
      ['EvacuateInstancesTask', 'SUCCESS', 1],
    ],
  );
  assert.match(details[0]!.progressDetails[0]!.timestamp, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d{6})?$/);
  const moves = stored.status?.vmoves ?? [];
  assert.equal(moves.map((m) => m.instanceUuid).sort(), [...ids].sort());
  assert.ok(moves.every((m) => m.status === 'succeeded' && m.destHost && m.startTime && m.endTime));
  assertEvacuatedOnce(e.sim, ids);
});

test('a run cut off mid-evacuation resumes from a fresh read: exactly once, nothing locked', async ({ env }) => {
  const e = env!;
  for (const s of [...e.sim.state.servers.values()]) e.sim.state.removeServer(s.id);
  e.sim.state.recoverHost(FAILED, { enable: true });
  const ids = ['p', 'q', 'r', 's', 't'].map((name) => e.sim.state.addServer({ host: FAILED, name }).id);
  e.sim.state.failHost(FAILED);
  const n = await createRunningNotification(e, 'journal-resume');

  const dying = new AbortController();
  const original = e.nova.evacuate.bind(e.nova);
  let calls = 0;
  e.nova.evacuate = async (...args) => {
    await original(...args);
    if (++calls === 2) dying.abort(new Error('engine process died'));
  };
  const first = await runHostFailure(contextFor(e, n, dying.signal), noFallback).then(
    () => 'resolved',
    (err: Error) => err.message,
  );
  e.nova.evacuate = original;
  assert.is(first, 'engine process died');

  // A new engine process: read the object again and re-enter the same run.
  const reread = await e.kube.get<Notification>(RESOURCES.notifications, e.ns.namespace, 'journal-resume');
  assert.ok((reread.status?.vmoves ?? []).length === 5, 'the moves were durable before the crash');
  await runHostFailure(contextFor(e, reread, new AbortController().signal), noFallback);

  const stored = await e.kube.get<Notification>(RESOURCES.notifications, e.ns.namespace, 'journal-resume');
  assert.ok((stored.status?.vmoves ?? []).every((m) => m.status === 'succeeded'));
  assertEvacuatedOnce(e.sim, ids);
});

test.run();
