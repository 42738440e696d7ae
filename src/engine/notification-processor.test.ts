import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { KubeError } from '../k8s/client.ts';
import { RESOURCES } from '../k8s/resources.ts';
import { LABELS } from '../model/constants.ts';
import type { HaHost, Notification } from '../model/types.ts';
import type { NovaClient } from '../openstack/types.ts';
import { NovaError } from '../openstack/types.ts';
import type { Config } from '../config/config.ts';
import { Registry } from 'prom-client';
import { NotificationProcessor } from './notification-processor.ts';
import { registerEngineMetrics } from './telemetry/metrics.ts';
import type { EngineEvents, FencingPrecondition } from './deps/processor-deps.ts';
import type { HostWorkflow, RecoveryDriver } from './workflows/recovery-driver.ts';
import { taskflowDriver } from './workflows/driver.ts';
import { RecoveryFailed, SkipRecovery } from './workflows/context.ts';
import type { WorkflowContext } from './workflows/context.ts';
import { FakeNova, makeServer } from '../testing/fake-nova.ts';
import { host, notification, NS, segment, testConfig, world, worldDeps } from './testing/fixtures.ts';
import type { World } from './testing/fixtures.ts';
import { serverLockKey } from './nova/server-locks.ts';
import { RETRY_SPACING_MS } from './periodic/notification-tasks.ts';
import { NotOwnerError } from './status/writer.ts';
import type { EngineBookkeeping } from './status/writer.ts';
import { until } from '../testing/until.ts';
import type { ConfigMap } from '../store/configmap.ts';
import { notificationClaimName } from '../store/names.ts';
import { payloadHash } from '../store/admission/fingerprints.ts';

const SERVER = '11111111-2222-3333-4444-555555555555';

interface Harness {
  w: World;
  nova: FakeNova;
  p: NotificationProcessor;
  events: string[];
  hostRuns: WorkflowContext[];
  queue: string[];
  delayed: Array<{ key: string; ms: number }>;
  leader: AbortController;
  /** What isGracefulStop() answers when the leading signal aborts. */
  graceful: boolean;
  settle(): Promise<void>;
  add(n: Notification): void;
  get(name: string): Notification;
  host(): HaHost;
}

async function harness(
  o: {
    hostWorkflow?: HostWorkflow;
    /** Instance and process workflows in place of the taskflow driver's. */
    driver?: Partial<Pick<RecoveryDriver, 'instance' | 'process'>>;
    config?: Config;
    nova?: NovaClient | null;
    segmentEnabled?: boolean;
    requireFencing?: boolean;
    fencing?: FencingPrecondition;
    hostOver?: Partial<HaHost['spec']>;
  } = {},
): Promise<Harness> {
  const w = await world();
  const nova = new FakeNova({ stopMs: 0 });
  nova.addServer(makeServer(SERVER));
  w.kube.seed(
    RESOURCES.segments,
    segment('seg', 'seg-uuid', {
      enabled: o.segmentEnabled ?? true,
      ...(o.requireFencing ? { requireFencing: true } : {}),
    }),
  );
  w.kube.seed(RESOURCES.hosts, host('compute-1', 'host-uuid-1', 'seg-uuid', o.hostOver ?? {}));
  const events: string[] = [];
  const hostRuns: WorkflowContext[] = [];
  const queue: string[] = [];
  const delayed: Array<{ key: string; ms: number }> = [];
  const sink: EngineEvents = {
    onNotification: (n, type, reason, message) => events.push(`${n.metadata.name} ${type} ${reason}: ${message}`),
    onHost: (h, type, reason) => events.push(`host ${h.spec.name} ${type} ${reason}`),
  };
  const p = new NotificationProcessor({
    ...worldDeps(w),
    config: o.config ?? testConfig(),
    ...(o.nova === null ? {} : { nova: o.nova ?? nova }),
    events: sink,
    driver: {
      ...taskflowDriver(),
      ...o.driver,
      host:
        o.hostWorkflow ??
        (async (ctx) => {
          hostRuns.push(ctx);
        }),
    },
    enqueue: (k) => queue.push(k),
    ...(o.fencing ? { fencing: o.fencing } : {}),
  });
  const leader = new AbortController();
  p.startLeading(leader.signal, { isGracefulStop: () => h.graceful });
  const h: Harness = {
    graceful: false,
    w,
    nova,
    p,
    events,
    hostRuns,
    queue,
    delayed,
    leader,
    async settle() {
      for (let i = 0; i < 200; i++) {
        while (queue.length > 0) {
          const key = queue.shift() ?? '';
          const { requeueAfterMs } = await p.reconcile(key);
          if (requeueAfterMs !== undefined) delayed.push({ key, ms: requeueAfterMs });
        }
        await p.whenIdle();
        if (queue.length === 0) return;
      }
      throw new Error('did not settle');
    },
    add(n) {
      w.kube.seed(RESOURCES.notifications, n);
      queue.push(n.metadata.name ?? '');
    },
    get: (name) => w.kube.peek<Notification>(RESOURCES.notifications, name),
    host: () => w.kube.peek<HaHost>(RESOURCES.hosts, 'host-compute-1'),
  };
  return h;
}

const hostStopped = (name: string, o: Parameters<typeof notification>[3] = {}) =>
  notification(name, 'COMPUTE_HOST', { event: 'STOPPED', host_status: 'NORMAL', cluster_status: 'OFFLINE' }, o);
const vmEvent = (name: string, event = 'LIFECYCLE', detail = 'STOPPED_FAILED') =>
  notification(name, 'VM', { event, vir_domain_event: detail, instance_uuid: SERVER });
/** Blocks until the run is cancelled (FakeClock.sleep would return at once). */
const untilAborted = (signal: AbortSignal) =>
  new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
const engineOfN = (n: Notification) => (n.status?.engine ?? {}) as EngineBookkeeping;

// ---------------------------------------------------------------- decisions

const decisions = suite('decisions');

decisions('a disabled segment ignores the notification with the upstream message, without a run', async () => {
  const h = await harness({ segmentEnabled: false });
  h.add(hostStopped('n1'));
  await h.settle();
  const n = h.get('n1');
  assert.is(n.status?.phase, 'ignored');
  assert.is(n.status?.message, 'Recovery aboart: the segment HA is disabled.');
  assert.is(n.status?.runs, undefined);
  assert.is(h.hostRuns.length, 0);
  assert.is(h.host().status?.onMaintenance, undefined);
});

decisions('the disabled-segment check also applies to the periodic retry (B6 fixed)', async () => {
  const h = await harness();
  h.w.kube.seed(RESOURCES.notifications, {
    ...hostStopped('n1'),
    status: { ...hostStopped('n1').status, phase: 'error', runs: 1 },
  });
  h.w.kube.mutate(RESOURCES.segments, 'seg', (s: { spec: { enabled: boolean } }) => (s.spec.enabled = false), false);
  h.p.processUnfinished();
  await h.settle();
  assert.is(h.get('n1').status?.phase, 'ignored');
  assert.is(h.get('n1').status?.message, 'Recovery aboart: the segment HA is disabled.');
});

decisions('a run resumed after its segment was disabled ends ignored with the upstream message', async () => {
  const h = await harness({ segmentEnabled: false });
  const base = hostStopped('n1');
  h.w.kube.seed(RESOURCES.notifications, {
    ...base,
    status: { ...base.status, phase: 'running', runs: 1, engine: { owner: 'dead#1' } },
  });
  h.queue.push('n1');
  await h.settle();
  const n = h.get('n1');
  assert.is(n.status?.phase, 'ignored');
  assert.is(n.status?.message, 'Recovery aboart: the segment HA is disabled.');
  assert.is(h.hostRuns.length, 0);
});

decisions('VM: an unrecoverable event pair is ignored without any Nova call', async () => {
  const h = await harness();
  h.add(vmEvent('n1', 'LIFECYCLE', 'STOPPED_SHUTDOWN'));
  await h.settle();
  assert.is(h.get('n1').status?.phase, 'ignored');
  assert.is(h.nova.calls.length, 0);
});

decisions('VM: a recoverable event runs the instance workflow to finished', async () => {
  const h = await harness();
  h.add(vmEvent('n1', 'IO_ERROR', 'IO_ERROR_REPORT'));
  await h.settle();
  const n = h.get('n1');
  assert.is(n.status?.phase, 'finished');
  assert.is(n.status?.runs, 1);
  assert.equal(
    n.status?.recoveryWorkflowDetails?.map((e) => [e.name, e.state, e.run]),
    [
      ['StopInstanceTask', 'SUCCESS', 0],
      ['StartInstanceTask', 'SUCCESS', 0],
      ['ConfirmInstanceActiveTask', 'SUCCESS', 0],
    ],
  );
  assert.ok(h.events.some((e) => e.includes('n1 Normal RecoveryFinished')));
  assert.equal(
    h.events.filter((e) => e.startsWith('host ')),
    [],
    "a VM notification's phase Events stay on the Notification, not its host",
  );
});

decisions('COMPUTE_HOST: host_status UNKNOWN or missing is ignored; STARTED finishes', async () => {
  const h = await harness();
  h.add(notification('a', 'COMPUTE_HOST', { event: 'STOPPED', host_status: 'UNKNOWN' }));
  h.add(notification('b', 'COMPUTE_HOST', { event: 'STOPPED' }, { uuid: 'u-b' }));
  h.add(notification('c', 'COMPUTE_HOST', { event: 'STARTED', host_status: 'NORMAL' }, { uuid: 'u-c' }));
  await h.settle();
  assert.equal(
    ['a', 'b', 'c'].map((k) => h.get(k).status?.phase),
    ['ignored', 'ignored', 'finished'],
  );
  assert.is(h.hostRuns.length, 0);
  assert.is(h.host().status?.onMaintenance, undefined);
  assert.not.ok(
    h.events.some((e) => e.startsWith('host compute-1 Normal HostOnMaintenance')),
    'no OnMaintenance Event on a host left in service',
  );
});

decisions(
  'COMPUTE_HOST STOPPED: host set on maintenance and un-reserved in status (never spec), then the host workflow',
  async () => {
    const h = await harness({ hostOver: { reserved: true } });
    h.add(hostStopped('n1'));
    await h.settle();
    const hh = h.host();
    assert.equal(
      { onMaintenance: hh.status?.onMaintenance, reserved: hh.status?.reserved, gen: hh.status?.flagsGeneration },
      { onMaintenance: true, reserved: false, gen: hh.metadata.generation },
    );
    assert.is(hh.spec.reserved, true);
    assert.is(hh.spec.onMaintenance, false);
    assert.is(h.hostRuns.length, 1);
    const ctx = h.hostRuns[0]!;
    assert.equal(
      [ctx.run, ctx.notification.hostname, ctx.notification.recoveryMethod, ctx.notification.uuid],
      [0, 'compute-1', 'auto', 'uuid-n1'],
    );
    assert.is(h.get('n1').status?.phase, 'finished');
    assert.equal(
      h.events.filter((e) => e.startsWith('host ')),
      [
        'host compute-1 Normal RecoveryStarted',
        'host compute-1 Normal HostOnMaintenance',
        'host compute-1 Normal RecoveryFinished',
      ],
      'Events on the HaHost',
    );
  },
);

decisions(
  'PROCESS: nova-compute runs the process workflow; another process finishes but the host stays on maintenance',
  async () => {
    const h = await harness();
    h.nova.addService('compute-1');
    h.add(notification('p1', 'PROCESS', { event: 'STOPPED', process_name: 'nova-compute' }));
    await h.settle();
    assert.is(h.get('p1').status?.phase, 'finished');
    assert.is(h.nova.services[0]!.status, 'disabled');
    const h2 = await harness();
    h2.add(notification('p2', 'PROCESS', { event: 'STOPPED', process_name: 'libvirtd' }));
    await h2.settle();
    assert.is(h2.get('p2').status?.phase, 'finished');
    assert.is(h2.host().status?.onMaintenance, true);
    assert.is(h2.nova.calls.length, 0);
    const h3 = await harness();
    h3.add(notification('p3', 'PROCESS', { event: 'STARTED', process_name: 'nova-compute' }));
    await h3.settle();
    assert.is(h3.get('p3').status?.phase, 'finished');
    assert.is(h3.host().status?.onMaintenance, undefined);
  },
);

decisions(
  'PROCESS with maintenance_only_for_nova_compute: a libvirtd STOPPED finishes and leaves the host out of maintenance (B7)',
  async () => {
    const config = testConfig();
    config.process_failure.maintenance_only_for_nova_compute = true;
    const h = await harness({ config });
    h.add(notification('p1', 'PROCESS', { event: 'STOPPED', process_name: 'libvirtd' }));
    await h.settle();
    assert.is(h.get('p1').status?.phase, 'finished');
    assert.is(h.host().status?.onMaintenance, undefined);
    assert.is(h.nova.calls.length, 0);
    assert.not.ok(h.events.some((e) => e.startsWith('host compute-1 Normal HostOnMaintenance')));
  },
);

decisions(
  'PROCESS STOPPED on a reserved host puts it on maintenance but keeps it reserved (only host failures un-reserve)',
  async () => {
    const h = await harness({ hostOver: { reserved: true } });
    h.add(notification('p1', 'PROCESS', { event: 'STOPPED', process_name: 'libvirtd' }));
    await h.settle();
    assert.is(h.get('p1').status?.phase, 'finished');
    const hh = h.host();
    assert.equal(
      { onMaintenance: hh.status?.onMaintenance, reserved: hh.status?.reserved, gen: hh.status?.flagsGeneration },
      { onMaintenance: true, reserved: true, gen: hh.metadata.generation },
    );
  },
);

decisions('no Nova configured: a notification that needs Nova ends in error with a clear reason', async () => {
  const h = await harness({ nova: null });
  h.add(vmEvent('n1'));
  await h.settle();
  const n = h.get('n1');
  assert.is(n.status?.phase, 'error');
  assert.match(engineOfN(n).lastError ?? '', 'No Nova client is configured');
});

decisions('a notification created by kubectl waits until the store admitted it', async () => {
  const h = await harness();
  const raw = vmEvent('k1');
  h.add({ ...raw, status: {} });
  await h.settle();
  assert.is(h.get('k1').status?.phase, undefined);
  h.w.kube.mutate(RESOURCES.notifications, 'k1', (n: Notification) => (n.status = raw.status));
  h.queue.push('k1');
  await h.settle();
  assert.is(h.get('k1').status?.phase, 'finished');
});

decisions('a notification whose source host is not in the cache stays new and asks to be looked at again', async () => {
  const h = await harness();
  h.add(hostStopped('n1', { hostUuid: 'host-uuid-unknown' }));
  await h.settle();
  assert.is(h.get('n1').status?.phase, undefined);
  assert.equal(h.delayed, [{ key: 'n1', ms: 15_000 }]);
  assert.is(h.hostRuns.length, 0);
});

decisions('each notification type runs its workflow from the injected RecoveryDriver', async () => {
  const ran: string[] = [];
  const h = await harness({
    driver: {
      instance: async (ctx) => void ran.push(`instance ${ctx.notification.uuid}`),
      process: async (ctx) => void ran.push(`process ${ctx.notification.uuid}`),
    },
  });
  h.add(vmEvent('v1'));
  h.add(
    notification(
      'p1',
      'PROCESS',
      { event: 'STOPPED', process_name: 'nova-compute' },
      { uuid: 'uuid-p1', hostUuid: 'host-uuid-1' },
    ),
  );
  await h.settle();
  assert.equal(ran.sort(), ['instance uuid-v1', 'process uuid-p1']);
  assert.equal(
    ['v1', 'p1'].map((k) => h.get(k).status?.phase),
    ['finished', 'finished'],
  );
});

/** What the sealed view shows of a REST notification the engine has not written yet (src/store/admission/seal.ts). */
function sealedView(n: Notification): Notification {
  return { ...n, status: { ...n.status, phase: 'new', admittedBySeal: true } };
}

/** The duplicate claim of `n`'s fingerprint, naming `holder` at `generatedTime`. */
function claimOf(n: Notification, holder: string, generatedTime: string): ConfigMap {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: notificationClaimName(n.spec.type, 'host-uuid-1', payloadHash(n.spec.payload)), namespace: NS },
    data: { type: n.spec.type, generatedTime, notification: holder, uuid: `uuid-${holder}`, acceptedAt: '0' },
  };
}

decisions(
  'a notification only its seal admits runs once its claim names it; its first write stores the admission',
  async () => {
    const h = await harness();
    const n = sealedView(vmEvent('n1', 'IO_ERROR', 'IO_ERROR_REPORT'));
    h.w.kube.seed(RESOURCES.configMaps, claimOf(n, 'n1', n.spec.generatedTime));
    h.add(n);
    await h.settle();
    const stored = h.get('n1');
    assert.is(stored.status?.phase, 'finished');
    assert.is(stored.status?.uuid, 'uuid-n1');
    assert.is(stored.status?.sourceHostUuid, 'host-uuid-1');
    assert.is(stored.status?.admittedBySeal, undefined, 'the view marker is never written');
  },
);

decisions("a sealed notification that lost its claim's race is deleted, never run", async () => {
  const h = await harness();
  const n = sealedView(vmEvent('n2', 'IO_ERROR', 'IO_ERROR_REPORT'));
  h.w.kube.seed(RESOURCES.configMaps, claimOf(n, 'n-winner', n.spec.generatedTime));
  h.add(n);
  await h.settle();
  assert.is(h.w.kube.peek(RESOURCES.notifications, NS, 'n2'), undefined);
  assert.is(h.nova.calls.length, 0);
});

decisions.run();

// ---------------------------------------------------------------- retries and failures

const retries = suite('retries');

retries('error → one periodic retry → failed, with Masakari log texts as the reason', async () => {
  let calls = 0;
  const h = await harness({
    hostWorkflow: async (ctx) => {
      calls++;
      await ctx.progress.start('DisableComputeServiceTask');
      throw new RecoveryFailed(`Failed to evacuate instances '${SERVER}' from host 'compute-1'`);
    },
  });
  h.add(hostStopped('n1'));
  await h.settle();
  assert.is(h.get('n1').status?.phase, 'error');
  assert.is(engineOfN(h.get('n1')).lastError, `Failed to evacuate instances '${SERVER}' from host 'compute-1'`);
  h.p.processUnfinished();
  await h.settle();
  const n = h.get('n1');
  assert.is(n.status?.phase, 'failed');
  assert.is(n.status?.runs, 2);
  assert.is(calls, 2);
  assert.equal([...new Set(n.status?.recoveryWorkflowDetails?.map((e) => e.run))], [0, 1]);
  // failed is final: further passes do nothing
  h.p.processUnfinished();
  await h.settle();
  assert.is(calls, 2);
});

retries('a retry that succeeds ends finished', async () => {
  let calls = 0;
  const h = await harness({
    hostWorkflow: async () => {
      if (++calls === 1) throw new Error('nova went away');
    },
  });
  h.add(hostStopped('n1'));
  await h.settle();
  assert.is(
    engineOfN(h.get('n1')).lastError,
    "Failed to execute host failure flow for notification 'uuid-n1'. (Error: nova went away)",
  );
  h.p.processUnfinished();
  await h.settle();
  assert.is(h.get('n1').status?.phase, 'finished');
});

retries('Nova 5xx in the instance workflow → error → retry → failed', async () => {
  const h = await harness();
  h.nova.failNext('getServer', new NovaError(503, 'Service Unavailable'), new NovaError(503, 'Service Unavailable'));
  h.add(vmEvent('n1'));
  await h.settle();
  assert.is(h.get('n1').status?.phase, 'error');
  h.p.processUnfinished();
  await h.settle();
  assert.is(h.get('n1').status?.phase, 'failed');
});

retries(
  'a new notification older than retry_notification_new_status_interval gets one attempt; an error then is final',
  async () => {
    const h = await harness({
      hostWorkflow: async () => {
        throw new RecoveryFailed('nope');
      },
    });
    // seeded but never enqueued: the watch event was "lost"
    h.w.kube.seed(RESOURCES.notifications, hostStopped('n1', { generatedTime: '2026-01-02T03:00:00' }));
    h.p.processUnfinished();
    await h.settle();
    assert.is(h.get('n1').status?.phase, 'failed');
    assert.is(h.get('n1').status?.runs, 1);
  },
);

retries('a young new notification is left to the watch path by the periodic task', async () => {
  const h = await harness();
  h.w.kube.seed(RESOURCES.notifications, vmEvent('n1'));
  h.w.kube.mutate(
    RESOURCES.notifications,
    'n1',
    (n: Notification) => (n.spec.generatedTime = h.w.clock.now().toISOString()),
    false,
  );
  h.p.processUnfinished();
  await h.settle();
  assert.is(h.get('n1').status?.phase, undefined);
});

retries('SkipRecovery from the host workflow finishes; startFallbackRun opens the next run', async () => {
  const h = await harness({
    hostWorkflow: async (ctx, fallback) => {
      await ctx.progress.start('DisableComputeServiceTask');
      const next = await fallback();
      assert.is(next.run, 1);
      await next.progress.start('DisableComputeServiceTask');
      throw new SkipRecovery("Skipped host 'compute-1' recovery as no instances needs to be evacuated");
    },
  });
  h.add(hostStopped('n1'));
  await h.settle();
  const n = h.get('n1');
  assert.is(n.status?.phase, 'finished');
  assert.is(n.status?.runs, 2);
});

retries(
  'requireFencing: time spent waiting for proof of fencing is not an attempt; an error after it still gets its retry',
  async () => {
    let fenced = false;
    let calls = 0;
    const h = await harness({
      requireFencing: true,
      fencing: async () => (fenced ? { proven: true, proof: 'test' } : { proven: false, missing: 'no proof yet' }),
      hostWorkflow: async () => {
        if (++calls === 1) throw new RecoveryFailed('first run fails');
      },
    });
    // Generated long ago: the periodic task would call it stuck in new.
    h.add(hostStopped('n1', { generatedTime: '2026-01-02T03:00:00' }));
    await h.settle();
    assert.is(h.get('n1').status?.phase ?? 'new', 'new');
    assert.is(calls, 0);
    h.p.processUnfinished(); // held at the gate: not picked up as stuck
    assert.equal(h.queue, []);
    await h.settle();
    fenced = true;
    for (const d of h.delayed.splice(0)) h.queue.push(d.key);
    await h.settle();
    assert.is(h.get('n1').status?.phase, 'error', 'the first run after the proof is a normal attempt');
    h.p.processUnfinished();
    await h.settle();
    assert.is(h.get('n1').status?.phase, 'finished');
    assert.is(calls, 2);
  },
);

retries(
  'the last attempt re-reads a host its cache missed from the API server instead of failing the notification',
  async () => {
    const h = await harness();
    // A watch that fell behind: the API server has a new host, the engine's cache does not.
    h.w.hosts.stop();
    const late = host('compute-2', 'host-uuid-2', 'seg-uuid', {}, 2);
    h.w.kube.seed(RESOURCES.hosts, {
      ...late,
      metadata: { ...late.metadata, labels: { [LABELS.uuid]: 'host-uuid-2' } },
    });
    assert.is(h.w.hosts.get('host-compute-2'), undefined);
    const base = hostStopped('n2', { hostUuid: 'host-uuid-2', hostname: 'compute-2' });
    h.w.kube.seed(RESOURCES.notifications, { ...base, status: { ...base.status, phase: 'error', runs: 1 } });
    h.p.processUnfinished();
    await h.settle();
    assert.is(h.get('n2').status?.phase, 'finished');
    assert.is(h.hostRuns.length, 1, 'the host workflow ran');
    assert.ok(h.w.hosts.get('host-compute-2'), 'and the cache has the host now');
  },
);

retries('a host gone from the API server too still fails the last attempt with the upstream message', async () => {
  const h = await harness();
  await h.w.kube.delete(RESOURCES.hosts, NS, 'host-compute-1');
  h.w.hosts.deleteLocal('host-compute-1');
  const base = hostStopped('n1');
  h.w.kube.seed(RESOURCES.notifications, { ...base, status: { ...base.status, phase: 'error', runs: 1 } });
  h.p.processUnfinished();
  await h.settle();
  assert.is(h.get('n1').status?.phase, 'failed');
  assert.ok(JSON.stringify(h.get('n1').status).includes('Host host-uuid-1 could not be found.'));
  assert.is(h.hostRuns.length, 0);
});

retries('the periodic task retries notifications in error one at a time, newest first, as Masakari does', async () => {
  const gates: Array<() => void> = [];
  const h = await harness({ hostWorkflow: () => new Promise<void>((resolve) => gates.push(resolve)) });
  const second = host('compute-2', 'host-uuid-2', 'seg-uuid', {}, 2);
  h.w.kube.seed(RESOURCES.hosts, {
    ...second,
    metadata: { ...second.metadata, labels: { [LABELS.uuid]: 'host-uuid-2' } },
  });
  await until(() => h.w.hosts.get('host-compute-2') !== undefined);
  // Two hosts, so the per-host mutex does not order them: only the periodic task does. n2 is the newer.
  for (const [name, o] of [
    ['n1', {}],
    ['n2', { hostUuid: 'host-uuid-2', hostname: 'compute-2' }],
  ] as const) {
    const base = hostStopped(name, o);
    h.w.kube.seed(RESOURCES.notifications, { ...base, status: { ...base.status, phase: 'error', runs: 1 } });
  }
  await until(() => h.w.notifications.get('n2') !== undefined);
  const drain = async () => {
    while (h.queue.length > 0) await h.p.reconcile(h.queue.shift() ?? '');
  };
  const phases = () => [h.get('n1').status?.phase, h.get('n2').status?.phase];

  const pass = h.p.processUnfinished();
  await drain();
  await until(() => gates.length > 0);
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.is(gates.length, 1, 'one retry runs');
  assert.equal(phases(), ['error', 'running'], 'the newest first');
  gates[0]!();
  await until(() => h.get('n2').status?.phase === 'finished');
  await until(() => h.queue.length > 0); // the run's end brings its key back
  await drain();
  await until(() => h.queue.includes('n1')); // that ended the first attempt: the pass picks the next
  await drain();
  await until(() => gates.length === 2);
  assert.equal(phases(), ['running', 'finished'], 'the next one once the first has ended');
  gates[1]!();
  await until(() => h.get('n1').status?.phase === 'finished');
  await until(() => h.queue.length > 0);
  await drain();
  await pass;
});

retries('a pass starts its retries RETRY_SPACING_MS apart: quick failures do not flood the API server', async () => {
  const starts: number[] = [];
  const h: Harness = await harness({
    hostWorkflow: async () => {
      starts.push(h.w.clock.now().getTime());
      throw new RecoveryFailed('fails at once, as a retry of an instance Nova does not know');
    },
  });
  for (const name of ['n1', 'n2', 'n3']) {
    const base = hostStopped(name, { uuid: `uuid-${name}` });
    h.w.kube.seed(RESOURCES.notifications, { ...base, status: { ...base.status, phase: 'error', runs: 1 } });
  }
  await until(() => h.w.notifications.get('n3') !== undefined);
  const began = h.w.clock.now().getTime();
  let over = false;
  const pass = h.p.processUnfinished().then(() => (over = true));
  while (!over) {
    await h.settle();
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  await pass;
  assert.is(starts.length, 3);
  assert.is(starts[0], began, 'the first retry starts at once');
  assert.ok(starts[1]! - starts[0]! >= RETRY_SPACING_MS, `${starts[1]! - starts[0]!} ms between the first two`);
  assert.ok(starts[2]! - starts[1]! >= RETRY_SPACING_MS, `${starts[2]! - starts[1]!} ms between the last two`);
  assert.equal(
    ['n1', 'n2', 'n3'].map((n) => h.get(n).status?.phase),
    ['failed', 'failed', 'failed'],
  );
});

retries.run();

// ---------------------------------------------------------------- serialisation, expiry, crash safety

const safety = suite('safety');

safety('two notifications of one host never run at once; the second starts when the first ends', async () => {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const order: string[] = [];
  const h = await harness({
    hostWorkflow: async (ctx) => {
      order.push(`start ${ctx.notification.uuid}`);
      if (ctx.notification.uuid === 'uuid-a') await gate;
      order.push(`end ${ctx.notification.uuid}`);
    },
  });
  h.add(hostStopped('a'));
  while (h.queue.length) await h.p.reconcile(h.queue.shift() ?? '');
  h.add(hostStopped('b', { uuid: 'uuid-b' }));
  while (h.queue.length) await h.p.reconcile(h.queue.shift() ?? '');
  assert.is(h.get('b').status?.phase, undefined);
  assert.equal(order, ['start uuid-a']);
  release();
  await h.settle();
  assert.equal(order, ['start uuid-a', 'end uuid-a', 'start uuid-b', 'end uuid-b']);
  assert.is(h.get('b').status?.phase, 'finished');
});

safety(
  'expiry: new/error/running older than notifications_expired_interval become failed; a running run is cancelled and its locks released',
  async () => {
    let started!: () => void;
    const running = new Promise<void>((r) => (started = r));
    let cancelled = false;
    const h = await harness({
      hostWorkflow: async (ctx) => {
        await ctx.effects.intend(serverLockKey(SERVER));
        await ctx.nova.lockServer(SERVER);
        started();
        await untilAborted(ctx.signal).catch((e) => {
          cancelled = true;
          throw e;
        });
      },
    });
    h.add(hostStopped('r'));
    while (h.queue.length) await h.p.reconcile(h.queue.shift() ?? '');
    await running;
    h.w.kube.seed(RESOURCES.notifications, {
      ...vmEvent('e'),
      status: { ...vmEvent('e').status, phase: 'error', uuid: 'uuid-e' },
    });
    h.w.kube.seed(RESOURCES.notifications, {
      ...vmEvent('f'),
      status: { ...vmEvent('f').status, phase: 'finished', uuid: 'uuid-f' },
    });
    assert.is(h.nova.servers.get(SERVER)!.locked, true);
    h.w.clock.advance(2 * 86_400_000);
    await h.p.checkExpired();
    await h.settle();
    assert.equal(
      ['r', 'e', 'f'].map((k) => h.get(k).status?.phase),
      ['failed', 'failed', 'finished'],
    );
    assert.ok(cancelled);
    assert.is(h.nova.servers.get(SERVER)!.locked, false);
    assert.is(engineOfN(h.get('r')).effects?.[serverLockKey(SERVER)]?.state, 'done');
    assert.ok(h.events.some((e) => e.startsWith('r Warning RecoveryExpired')));
  },
);

/** A host workflow that locks SERVER as the evacuation does (journalled first) and ends without its unlock. */
const lockAndLeave: HostWorkflow = async (ctx) => {
  await ctx.effects.intend(serverLockKey(SERVER), { run: ctx.run, at: ctx.clock.now().toISOString() });
  await ctx.nova.lockServer(SERVER, { requestId: ctx.requestId, signal: ctx.signal });
};

/** A host notification n1 whose run locked SERVER and whose unlock Nova refuses (until `h.nova.fault` is cleared). */
async function unlockRefused() {
  const registry = new Registry();
  registerEngineMetrics(registry);
  const h = await harness({ hostWorkflow: lockAndLeave });
  h.nova.fault = (method) => (method === 'unlockServer' ? new NovaError(500, 'unlock refused') : undefined);
  h.add(hostStopped('n1'));
  await h.settle();
  return { h, registry };
}

safety(
  'a server left locked after finished: a run whose unlock Nova keeps refusing ends error, naming the server, with the metric set',
  async () => {
    const { h, registry } = await unlockRefused();
    const n = h.get('n1');
    assert.is(n.status?.phase, 'error');
    assert.match(engineOfN(n).lastError ?? '', SERVER);
    assert.is(engineOfN(n).effects?.[serverLockKey(SERVER)]?.state, 'intended', 'the journal keeps the lock');
    assert.is(h.nova.servers.get(SERVER)!.locked, true);
    assert.ok(h.events.some((e) => e.startsWith('n1 Warning RecoveryError') && e.includes(SERVER)));
    assert.match(await registry.metrics(), /masakari_servers_left_locked \d*[1-9]/);

    // Nova accepts unlocks again: the periodic retry's run releases the lock and clears the metric.
    h.nova.fault = undefined;
    h.p.processUnfinished();
    await h.settle();
    assert.is(h.get('n1').status?.phase, 'finished');
    assert.is(h.nova.servers.get(SERVER)!.locked, false);
    assert.match(await registry.metrics(), /masakari_servers_left_locked 0/);
  },
);

safety(
  'a server left locked after finished: an error notification that expires with the lock still journalled releases it',
  async () => {
    const { h, registry } = await unlockRefused();
    assert.is(h.get('n1').status?.phase, 'error');
    assert.is(h.nova.servers.get(SERVER)!.locked, true);

    // Its retry never came before the expiry (held by the brakes, or the interval is short): expiry is its end,
    // and retention then deletes the journal, the only record of the lock.
    h.nova.fault = undefined;
    h.w.clock.advance(2 * 86_400_000);
    await h.p.checkExpired();
    await h.settle();
    assert.is(h.get('n1').status?.phase, 'failed');
    assert.is(h.nova.servers.get(SERVER)!.locked, false);
    assert.is(engineOfN(h.get('n1')).effects?.[serverLockKey(SERVER)]?.state, 'done');
    assert.match(await registry.metrics(), /masakari_servers_left_locked 0/);
  },
);

safety(
  'a server left locked after finished: an unlock that fails and then succeeds ends the run finished',
  async () => {
    const h = await harness({ hostWorkflow: lockAndLeave });
    let failures = 0;
    h.nova.fault = (method) =>
      method === 'unlockServer' && failures++ < 1 ? new NovaError(500, 'unlock refused') : undefined;
    h.add(hostStopped('n1'));
    await h.settle();
    assert.is(h.get('n1').status?.phase, 'finished');
    assert.is(h.nova.servers.get(SERVER)!.locked, false);
  },
);

safety('resume after a crash: same run, new owner, leftover locks released before the workflow re-enters', async () => {
  const seen: Array<{ run: number; locked: boolean | undefined }> = [];
  const h = await harness({
    hostWorkflow: async (ctx) => {
      seen.push({ run: ctx.run, locked: (await ctx.nova.getServer(SERVER)).locked });
    },
  });
  h.nova.servers.get(SERVER)!.locked = true;
  const base = hostStopped('n1');
  h.w.kube.seed(RESOURCES.notifications, {
    ...base,
    status: {
      ...base.status,
      phase: 'running',
      runs: 1,
      engine: {
        owner: 'dead-engine#1',
        effectSeq: 1,
        effects: { [serverLockKey(SERVER)]: { state: 'intended', at: 'x', seq: 1 } },
      },
    },
  });
  h.queue.push('n1');
  await h.settle();
  assert.equal(seen, [{ run: 0, locked: false }]);
  const n = h.get('n1');
  assert.is(n.status?.phase, 'finished');
  assert.is(n.status?.runs, 1);
  assert.match(engineOfN(n).owner ?? '', /^engine-a#/);
  assert.is(h.nova.count('unlockServer'), 1);
});

safety(
  'losing leadership cancels the run without a final status; the stale owner cannot write afterwards',
  async () => {
    let entered!: () => void;
    const inRun = new Promise<void>((r) => (entered = r));
    let ctxSeen: WorkflowContext | undefined;
    const h = await harness({
      hostWorkflow: async (ctx) => {
        ctxSeen = ctx;
        entered();
        await untilAborted(ctx.signal);
      },
    });
    h.add(hostStopped('n1'));
    while (h.queue.length) await h.p.reconcile(h.queue.shift() ?? '');
    await inRun;
    h.leader.abort();
    await h.p.stopLeading('lease lost');
    const n = h.get('n1');
    assert.is(n.status?.phase, 'running');
    // a new leader takes the run over; the old context's journal is fenced off
    h.w.kube.mutate(
      RESOURCES.notifications,
      'n1',
      (x: Notification) => ((x.status!.engine as EngineBookkeeping).owner = 'engine-b#2'),
    );
    const err = await ctxSeen!.progress.update('DisableComputeServiceTask', 'late write', 0.5).catch((e) => e);
    assert.instance(err, Error);
    assert.not.ok(JSON.stringify(h.get('n1').status).includes('late write'));
  },
);

safety(
  'a graceful stop unlocks the servers of the runs it cancels; the run stays running for the next leader',
  async () => {
    let entered!: () => void;
    const inRun = new Promise<void>((r) => (entered = r));
    const h = await harness({
      hostWorkflow: async (ctx) => {
        await ctx.effects.intend(serverLockKey(SERVER));
        await ctx.nova.lockServer(SERVER);
        entered();
        await untilAborted(ctx.signal);
      },
    });
    h.add(hostStopped('n1'));
    while (h.queue.length) await h.p.reconcile(h.queue.shift() ?? '');
    await inRun;
    assert.is(h.nova.servers.get(SERVER)!.locked, true);
    // as in production: the leading signal aborts first (the engine is shutting down), then stopLeading runs
    h.graceful = true;
    h.leader.abort();
    await h.p.stopLeading('engine stopping', { releaseLocks: true });
    assert.is(h.nova.servers.get(SERVER)!.locked, false);
    const n = h.get('n1');
    assert.is(n.status?.phase, 'running');
    assert.is(engineOfN(n).effects?.[serverLockKey(SERVER)]?.state, 'done');
  },
);

safety('a notification deleted while it runs cancels its run', async () => {
  let entered!: () => void;
  const inRun = new Promise<void>((r) => (entered = r));
  const h = await harness({
    hostWorkflow: async (ctx) => {
      entered();
      await untilAborted(ctx.signal);
    },
  });
  h.add(hostStopped('n1'));
  while (h.queue.length) await h.p.reconcile(h.queue.shift() ?? '');
  await inRun;
  await h.w.kube.delete(RESOURCES.notifications, NS, 'n1');
  await h.p.reconcile('n1');
  await h.p.whenIdle();
  assert.not.ok(h.p.isRunning('n1'));
});

safety(
  'a run whose journal another engine took over is cancelled at once: its context aborts with the refusal',
  async () => {
    let refused: unknown;
    let seen: { aborted: boolean; reason: unknown } | undefined;
    let calls = 0;
    const h = await harness({
      hostWorkflow: async (ctx) => {
        // the harness has no engine-b: this processor takes the abandoned run over again, and that run finishes
        if (++calls > 1) return;
        await ctx.progress.start('DisableComputeServiceTask');
        // another engine takes the run over (the chaos suite's API server restart did this)
        h.w.kube.mutate(
          RESOURCES.notifications,
          'n1',
          (x: Notification) => ((x.status!.engine as EngineBookkeeping).owner = 'engine-b#2'),
        );
        refused = await ctx.progress.update('DisableComputeServiceTask', 'after the takeover', 0.5).catch((e) => e);
        // what a flow's error handling reads before it calls a failure unexpected (workflows/host-failure.ts asOutcome)
        seen = { aborted: ctx.signal.aborted, reason: ctx.signal.reason };
        throw refused;
      },
    });
    h.add(hostStopped('n1'));
    await h.settle();
    assert.instance(refused, NotOwnerError);
    assert.equal(seen, { aborted: true, reason: refused });
    const n = h.get('n1');
    assert.not.ok(JSON.stringify(n.status).includes('after the takeover'));
    assert.is(calls, 2);
    assert.is(n.status?.phase, 'finished');
    assert.is(n.status?.runs, 1, 'the same run, taken over: the one that lost it wrote no final status');
  },
);

safety('a run stopped by a failed journal write is taken over again after 5 s, not at once', async () => {
  let calls = 0;
  const h = await harness({
    hostWorkflow: async (ctx) => {
      if (++calls === 1) h.w.kube.failNext('patchStatus', new KubeError(422, 'Invalid', 'refused'), 'notifications');
      await ctx.progress.start('DisableComputeServiceTask');
    },
  });
  h.add(hostStopped('n1'));
  await h.settle();
  assert.is(h.get('n1').status?.phase, 'running');
  assert.is(calls, 1);
  assert.equal(h.delayed, [{ key: 'n1', ms: 5_000 }]);
  h.w.clock.advance(5_000);
  h.queue.push('n1');
  await h.settle();
  assert.is(calls, 2);
  assert.is(h.get('n1').status?.phase, 'finished');
  assert.is(h.get('n1').status?.runs, 1, 'the same run, taken over');
});

safety(
  'freshness (finding "a stale notification ran"): a host failure generated two days ago, past notifications_expired_interval, ends failed when first looked at, with no run and no Nova call',
  async () => {
    const h = await harness();
    h.add(hostStopped('stale', { generatedTime: '2025-12-31T03:04:00' }));
    await h.settle();
    const n = h.get('stale');
    assert.is(n.status?.phase, 'failed');
    assert.is(n.status?.runs, undefined, 'never run');
    assert.is(h.hostRuns.length, 0);
    assert.is(h.nova.calls.length, 0);
    assert.is(h.host().status?.onMaintenance, undefined, 'the host is left alone');
    assert.is(
      engineOfN(n).lastError,
      'Notification uuid-stale is expired: its generated_time 2025-12-31T03:04:00 is older than ' +
        'notifications_expired_interval (86400 s); it is not run.',
    );
    assert.ok(h.events.some((e) => e.startsWith('stale Warning RecoveryExpired: Notification uuid-stale is expired')));
  },
);

safety(
  'freshness: a VM notification past notifications_expired_interval is not run on its periodic last attempt either',
  async () => {
    const h = await harness();
    h.w.kube.seed(RESOURCES.notifications, {
      ...vmEvent('e'),
      spec: { ...vmEvent('e').spec, generatedTime: '2025-12-01T00:00:00' },
      status: { ...vmEvent('e').status, phase: 'error', runs: 1 },
    });
    void h.p.processUnfinished();
    await h.settle();
    assert.is(h.get('e').status?.phase, 'failed');
    assert.is(h.get('e').status?.runs, 1, 'no second run');
    assert.is(h.nova.calls.length, 0);
  },
);

safety('freshness: a notification just inside notifications_expired_interval still runs', async () => {
  const h = await harness();
  h.add(hostStopped('fresh', { generatedTime: '2026-01-01T03:05:00' }));
  await h.settle();
  assert.is(h.get('fresh').status?.phase, 'finished');
  assert.is(h.hostRuns.length, 1);
});

safety(
  'freshness: a generated_time more than the clock-skew tolerance in the future ends failed, not run; within it, runs',
  async () => {
    const h = await harness();
    h.add(hostStopped('future', { generatedTime: '2026-01-02T03:24:06' }));
    h.add(hostStopped('skewed', { uuid: 'uuid-skewed', generatedTime: '2026-01-02T03:14:05' }));
    await h.settle();
    assert.is(h.get('future').status?.phase, 'failed');
    assert.is(
      engineOfN(h.get('future')).lastError,
      'Notification uuid-future is refused: its generated_time 2026-01-02T03:24:06 is 1200 s in the future, more ' +
        'than the clock-skew tolerance (900 s); it is not run.',
    );
    assert.is(h.get('skewed').status?.phase, 'finished');
    assert.is(h.hostRuns.length, 1);
  },
);

safety.run();
