// The BMC fence before a host recovery (src/engine/gates/bmc-fence.ts), on the
// processor with the simulator's fake Redfish BMC and the fake Nova: the
// order power off → confirmed Off → forced_down → evacuate, and every failure
// (refused, unreachable, timeout, a lying power state, a Nova that refuses
// forced_down) holding the notification new with its reason shown and nothing
// evacuated, until the BMC works again and the recovery completes.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Registry } from 'prom-client';
import { RESOURCES } from '../../k8s/resources.ts';
import { CONDITIONS } from '../../model/constants.ts';
import { BMC_POWER_OFF_TASK } from '../../model/recovery-tasks.ts';
import type { HaHost, HostFencing, Notification } from '../../model/types.ts';
import type { NovaClient } from '../../openstack/types.ts';
import { NovaError } from '../../openstack/types.ts';
import { startFakeRedfish } from '../../../tools/simulator/redfish-bmc.ts';
import type { FakeRedfish } from '../../../tools/simulator/redfish-bmc.ts';
import { installFakeIpmitool } from '../../testing/fake-ipmitool.ts';
import { FakeNova, makeServer } from '../../testing/fake-nova.ts';
import { until } from '../../testing/until.ts';
import type { Clock } from '../../time/clock.ts';
import { BMC_FENCE_REASONS, FENCE_BACKOFF, isOwnProof } from './bmc-fence.ts';
import { registerEngineMetrics } from '../telemetry/metrics.ts';
import { NotificationProcessor } from '../notification-processor.ts';
import type { EngineEvents } from '../deps/processor-deps.ts';
import { host, notification, NS, segment, testConfig, world, worldDeps } from '../testing/fixtures.ts';
import type { World } from '../testing/fixtures.ts';
import { taskflowDriver } from '../workflows/driver.ts';

const SERVER = '11111111-2222-3333-4444-555555555555';
const t = suite('BMC fence before a host recovery');
let bmc: FakeRedfish;

t.before(async () => {
  bmc = await startFakeRedfish({ systems: ['compute-1'], username: 'root', password: 'calvin' });
});
t.after(() => bmc.stop());
t.before.each(() => {
  bmc.clearFaults();
  bmc.password = 'calvin';
  bmc.setPower('compute-1', 'On');
  bmc.systems.get('compute-1')!.lieReads = 0;
  bmc.systems.get('compute-1')!.resets = {};
  bmc.log.length = 0;
});

interface Harness {
  w: World;
  nova: FakeNova;
  p: NotificationProcessor;
  order: string[];
  events: string[];
  queue: string[];
  /** Processes the queue until `cond` holds (background fence attempts enqueue on their end). */
  until(cond: () => boolean, ms?: number): Promise<void>;
  get(): Notification;
  /** Lets the clock pass the backoff and looks again. */
  retry(): void;
  registry: Registry;
}

async function harness(
  o: {
    fencing?: Partial<HostFencing>;
    requireFencing?: boolean;
    holdsLease?: () => boolean;
    ipmitool?: string;
  } = {},
): Promise<Harness> {
  const w = await world();
  const order: string[] = [];
  const nova = new FakeNova({ stopMs: 0, evacuateMs: 0 });
  nova.addHost('compute-1');
  nova.addHost('compute-2');
  nova.addServer(makeServer(SERVER));
  // Every Nova call in order with the BMC's power changes, to check which came first.
  const traced = new Proxy(nova, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver) as unknown;
      if (typeof v !== 'function') return v;
      return (...args: unknown[]) => {
        order.push(`nova ${String(prop)}${prop === 'updateService' ? ` ${JSON.stringify(args[1])}` : ''}`);
        return (v as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  }) as NovaClient;
  bmc.onPower((id, power) => order.push(`bmc ${id} ${power}`));
  w.kube.seed(RESOURCES.segments, segment('seg', 'seg-uuid', o.requireFencing ? { requireFencing: true } : {}));
  const fencing: HostFencing = {
    driver: 'redfish',
    address: bmc.url,
    systemId: 'compute-1',
    credentialsSecretRef: { name: 'bmc-compute-1' },
    timeoutSeconds: 1,
    powerOffTimeoutSeconds: 5,
    ...o.fencing,
  };
  w.kube.seed(RESOURCES.hosts, host('compute-1', 'host-uuid-1', 'seg-uuid', { fencing }));
  w.kube.seed(RESOURCES.hosts, host('compute-2', 'host-uuid-2', 'seg-uuid'));
  await w.kube.create(RESOURCES.secrets, NS, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'bmc-compute-1', namespace: NS },
    data: { username: Buffer.from('root').toString('base64'), password: Buffer.from('calvin').toString('base64') },
  });
  await until(() => w.hosts.list().length === 2 && w.segments.list().length === 1);
  const events: string[] = [];
  const sink: EngineEvents = {
    onNotification: (n, type, reason, message) => events.push(`${type} ${reason}: ${message}`),
    onHost: () => {},
  };
  const queue: string[] = [];
  const { bmcForHost } = await import('../../fencing/bmc/factory.ts');
  // Virtual time, but each sleep lets the real timers of the fake Nova (an evacuation's end) fire first.
  const clock: Clock = {
    now: () => w.clock.now(),
    setTimeout: (fn, ms) => w.clock.setTimeout(fn, ms),
    clearTimeout: (handle) => w.clock.clearTimeout(handle),
    sleep: async (ms, signal) => {
      await new Promise((r) => setTimeout(r, 1));
      return w.clock.sleep(ms, signal);
    },
  };
  const p = new NotificationProcessor({
    ...worldDeps(w),
    clock,
    config: testConfig(),
    nova: traced,
    events: sink,
    driver: taskflowDriver(),
    enqueue: (k) => queue.push(k),
    bmcFor: (h: HaHost) => bmcForHost(w.kube, h, o.ipmitool ? { ipmitool: o.ipmitool } : {}),
    ...(o.requireFencing ? { fencing: async () => ({ proven: false as const, missing: 'no FAR' }) } : {}),
  });
  p.startLeading(new AbortController().signal, o.holdsLease ? { holdsLease: o.holdsLease } : {});
  const registry = new Registry();
  registerEngineMetrics(registry);
  const h: Harness = {
    w,
    nova,
    p,
    order,
    events,
    queue,
    registry,
    async until(cond, ms = 15_000) {
      await until(
        async () => {
          while (queue.length > 0) await p.reconcile(queue.shift() ?? '');
          await p.whenIdle();
          return cond();
        },
        ms,
        5,
      );
    },
    get: () => w.kube.peek<Notification>(RESOURCES.notifications, 'n1'),
    retry() {
      w.clock.advance(FENCE_BACKOFF.capMs * 2);
      queue.push('n1');
    },
  };
  w.kube.seed(
    RESOURCES.notifications,
    notification('n1', 'COMPUTE_HOST', { event: 'STOPPED', host_status: 'NORMAL', cluster_status: 'OFFLINE' }),
  );
  await until(() => w.notifications.list().length === 1);
  queue.push('n1');
  return h;
}

const condition = (n: Notification) => n.status?.conditions?.find((c) => c.type === CONDITIONS.fencingVerified);
const fenceTask = (n: Notification) => n.status?.recoveryWorkflowDetails?.find((e) => e.name === BMC_POWER_OFF_TASK);
const evacuated = (h: Harness) => h.nova.evacuationsOf(SERVER);

t('fences, confirms Off, forces the service down, then evacuates; the proof is on the notification', async () => {
  const h = await harness();
  await h.until(() => h.get().status?.phase === 'finished');
  const firstEvacuate = h.order.indexOf('nova evacuate');
  assert.ok(firstEvacuate > 0, h.order.join('\n'));
  assert.ok(h.order.indexOf('bmc compute-1 Off') < h.order.indexOf('nova updateService {"forced_down":true}'));
  assert.ok(h.order.indexOf('nova updateService {"forced_down":true}') < firstEvacuate, h.order.join('\n'));
  const n = h.get();
  assert.ok(isOwnProof(n, n.status?.fencing));
  assert.is(n.status?.fencing?.driver, 'redfish');
  assert.is(n.status?.fencing?.bmc, `redfish ${bmc.url} system compute-1`);
  assert.is(n.status?.fencing?.powerState, 'Off');
  assert.is(condition(n)?.status, 'True');
  assert.is(condition(n)?.reason, BMC_FENCE_REASONS.verified);
  const task = fenceTask(n);
  assert.is(task?.state, 'SUCCESS', 'not reverted by the workflow');
  assert.is(task?.run, 0);
  assert.match(task!.progressDetails[0]!.message, 'Host compute-1 powered off through redfish');
  assert.is(h.nova.service('compute-1').forced_down, true);
  assert.is(evacuated(h), 1);
  assert.ok(h.events.some((e) => e.startsWith('Normal HostFenced')));
  const metrics = await h.registry.getSingleMetricAsString('masakari_fencing_attempts_total');
  assert.match(metrics, 'masakari_fencing_attempts_total{driver="redfish",result="success"}');
});

for (const c of [
  {
    name: 'refused (wrong password)',
    reason: BMC_FENCE_REASONS.refused,
    text: 'HTTP 401',
    breakIt: () => (bmc.password = 'rotated'),
  },
  {
    name: 'unreachable (nothing listening)',
    reason: BMC_FENCE_REASONS.unreachable,
    text: 'could not reach the BMC',
    fencing: { address: 'http://127.0.0.1:9' },
  },
  {
    name: 'timeout (no answer)',
    reason: BMC_FENCE_REASONS.timeout,
    text: 'no answer within 1s',
    breakIt: () => bmc.fault({ kind: 'hang', count: 1 }),
  },
  {
    name: 'a power state that lies On past powerOffTimeoutSeconds',
    reason: BMC_FENCE_REASONS.timeout,
    text: 'still reports PowerState On 5s after the power-off',
    breakIt: () => bmc.lie('compute-1', 1_000, 'On'),
  },
  {
    name: 'a 500',
    reason: BMC_FENCE_REASONS.error,
    text: 'HTTP 500',
    breakIt: () => bmc.fault({ kind: 500, count: 1 }),
  },
]) {
  t(`${c.name}: held new, reason shown, nothing evacuated; recovers once the BMC works`, async () => {
    c.breakIt?.();
    const h = await harness(c.fencing ? { fencing: c.fencing } : {});
    await h.until(() => condition(h.get())?.status === 'False');
    let n = h.get();
    assert.is(n.status?.phase ?? 'new', 'new');
    assert.is(condition(n)?.reason, c.reason);
    assert.match(condition(n)!.message, c.text);
    assert.is(fenceTask(n)?.state, 'RUNNING');
    assert.match(fenceTask(n)!.progressDetails[0]!.message, /^Attempt 1: .*next attempt in \d+s$/);
    assert.is(n.status?.fencing, undefined);
    assert.is(evacuated(h), 0);
    assert.not.ok(h.order.includes('nova updateService {"forced_down":true}'));
    assert.is(h.events.filter((e) => e.startsWith('Warning FencingFailed')).length, 1);
    const held = await h.registry.getSingleMetricAsString('masakari_fencing_held_notifications');
    assert.match(held, `reason="${c.reason}"`);
    // A look before the backoff elapsed does nothing.
    const attempts = bmc.log.length;
    h.queue.push('n1');
    await h.until(() => true);
    assert.is(bmc.log.length, attempts);

    // Fixed: the next attempt fences and the recovery completes without anyone stepping in.
    bmc.password = 'calvin';
    bmc.clearFaults();
    bmc.systems.get('compute-1')!.lieReads = 0;
    if (c.fencing) {
      h.w.kube.mutate(RESOURCES.hosts, 'host-compute-1', (x: HaHost) => (x.spec.fencing!.address = bmc.url), false);
      await until(() => h.w.hosts.list().some((x) => x.spec.fencing?.address === bmc.url));
    }
    h.retry();
    await h.until(() => h.get().status?.phase === 'finished');
    n = h.get();
    assert.is(condition(n)?.status, 'True');
    assert.is(evacuated(h), 1);
    assert.ok(h.order.indexOf('bmc compute-1 Off') < h.order.indexOf('nova evacuate'));
    assert.is(fenceTask(n)?.progressDetails.length, 2);
    const held2 = await h.registry.getSingleMetricAsString('masakari_fencing_held_notifications');
    assert.not.match(held2, `reason="${c.reason}"`);
  });
}

t('a fence failing for long keeps the first attempt and the latest 19 on the task record, one Event', async () => {
  bmc.password = 'rotated';
  const h = await harness();
  const lines = () => fenceTask(h.get())?.progressDetails ?? [];
  await h.until(() => lines().length === 1);
  for (let i = 2; i <= 25; i++) {
    h.retry();
    await h.until(() => lines().at(-1)?.message.startsWith(`Attempt ${i}:`) ?? false);
  }
  assert.is(lines().length, 20);
  assert.match(lines()[0]!.message, /^Attempt 1: /);
  assert.match(lines()[1]!.message, /^Attempt 7: /);
  assert.match(lines()[19]!.message, /^Attempt 25: .*next attempt in 3\d\ds$/);
  assert.is(h.events.filter((e) => e.startsWith('Warning FencingFailed')).length, 1, 'one Event per distinct reason');
  assert.is(evacuated(h), 0);
});

t('a notification held by a failing fence expires as any new one, and is no longer counted as held', async () => {
  bmc.password = 'rotated';
  const h = await harness();
  await h.until(() => condition(h.get())?.status === 'False');
  h.w.clock.advance(2 * 86_400_000);
  await h.p.checkExpired();
  await h.until(() => h.get().status?.phase === 'failed');
  h.queue.push('n1');
  await h.until(() => true);
  const held = await h.registry.getSingleMetricAsString('masakari_fencing_held_notifications');
  assert.not.match(held, 'reason="BmcRefused"');
  assert.is(evacuated(h), 0);
});

t('spec.fencing removed by a person while the fence fails: no longer held by it, the other guards decide', async () => {
  bmc.password = 'rotated';
  const h = await harness();
  await h.until(() => condition(h.get())?.status === 'False');
  h.w.kube.mutate(RESOURCES.hosts, 'host-compute-1', (x: HaHost) => delete x.spec.fencing, false);
  await until(() => !h.w.hosts.list().some((x) => x.spec.fencing));
  h.nova.service('compute-1').forced_down = true; // a person who knows the host is off
  h.queue.push('n1');
  await h.until(() => h.get().status?.phase === 'finished');
  const held = await h.registry.getSingleMetricAsString('masakari_fencing_held_notifications');
  assert.not.match(held, 'reason="BmcRefused"');
  assert.is(bmc.systems.get('compute-1')!.resets.ForceOff, undefined);
});

t('a power state that lies for a few reads is waited out within the bound', async () => {
  bmc.lie('compute-1', 3, 'On');
  const h = await harness();
  await h.until(() => h.get().status?.phase === 'finished');
  assert.is(h.events.filter((e) => e.includes('FencingFailed')).length, 0);
  assert.is(evacuated(h), 1);
});

t('Nova refusing forced_down holds it too, and the retry does not power off again', async () => {
  const h = await harness();
  h.nova.failNext('updateService', new NovaError(503, 'Service Unavailable'));
  await h.until(() => condition(h.get())?.reason === BMC_FENCE_REASONS.forceDown);
  assert.is(evacuated(h), 0);
  assert.ok(h.get().status?.fencing, 'the power-off proof is recorded');
  const resets = bmc.systems.get('compute-1')!.resets.ForceOff;
  h.retry();
  await h.until(() => h.get().status?.phase === 'finished');
  assert.is(bmc.systems.get('compute-1')!.resets.ForceOff, resets, 'confirmed by a read, not a second power-off');
  assert.is(evacuated(h), 1);
});

t(
  'a restarted engine confirms a recorded power-off by reading the BMC; powered on since, it fences again',
  async () => {
    const h = await harness();
    // Recorded by an engine that stopped before forcing the service down.
    const sent = new Date(h.w.clock.now().getTime() - 1000).toISOString();
    h.w.kube.mutate(
      RESOURCES.notifications,
      'n1',
      (x: Notification) =>
        (x.status!.fencing = {
          driver: 'redfish',
          bmc: `redfish ${bmc.url} system compute-1`,
          poweredOffAt: sent,
          confirmedAt: sent,
          powerState: 'Off',
        }),
    );
    await until(() => !!h.w.notifications.get('n1')?.status?.fencing);
    // A person powered it back on: the record proves nothing now.
    bmc.setPower('compute-1', 'On');
    await h.until(() => h.get().status?.phase === 'finished');
    assert.is(bmc.systems.get('compute-1')!.resets.ForceOff, 1, 'powered off again');
    assert.ok(h.get().status!.fencing!.poweredOffAt > sent);
  },
);

t('a proof from before the notification was created is not ours', () => {
  const n = { metadata: { creationTimestamp: '2026-01-01T00:00:10Z' } } as Notification;
  const rec = (at: string) => ({
    driver: 'redfish' as const,
    bmc: 'b',
    poweredOffAt: at,
    confirmedAt: at,
    powerState: 'Off' as const,
  });
  assert.not.ok(isOwnProof(n, rec('2026-01-01T00:00:09.999Z')));
  assert.ok(isOwnProof(n, rec('2026-01-01T00:00:10.000Z')));
  assert.not.ok(isOwnProof(n, undefined));
});

t('an engine that no longer holds the Lease sends no power-off', async () => {
  let held = false;
  const h = await harness({ holdsLease: () => held });
  await h.until(() => true);
  await new Promise((r) => setTimeout(r, 100));
  await h.until(() => h.queue.length === 0);
  assert.is(bmc.systems.get('compute-1')!.resets.ForceOff, undefined, 'no power-off sent');
  assert.is(h.get().status?.phase ?? 'new', 'new');
  assert.is(evacuated(h), 0);
  held = true;
  h.queue.push('n1');
  await h.until(() => h.get().status?.phase === 'finished');
  assert.is(bmc.systems.get('compute-1')!.resets.ForceOff, 1);
});

t('IPMI: refused, held; then chassis power off, status off, forced down, evacuated', async () => {
  const ipmi = installFakeIpmitool();
  try {
    ipmi.mode('refused');
    const h = await harness({
      fencing: { driver: 'ipmi', address: '127.0.0.1:6230', systemId: undefined },
      ipmitool: ipmi.bin,
    });
    await h.until(() => condition(h.get())?.reason === BMC_FENCE_REASONS.refused);
    assert.match(condition(h.get())!.message, 'unauthorized name');
    assert.is(evacuated(h), 0);
    ipmi.mode('ok');
    h.retry();
    await h.until(() => h.get().status?.phase === 'finished');
    assert.is(ipmi.power(), 'off');
    assert.is(h.get().status?.fencing?.driver, 'ipmi');
    assert.is(h.get().status?.fencing?.bmc, 'ipmi 127.0.0.1:6230');
    assert.is(h.nova.service('compute-1').forced_down, true);
    assert.is(evacuated(h), 1);
    assert.ok(ipmi.passwords().every((p) => p === 'calvin'));
    const metrics = await h.registry.getSingleMetricAsString('masakari_fencing_attempts_total');
    assert.match(metrics, 'masakari_fencing_attempts_total{driver="ipmi",result="refused"}');
    assert.match(metrics, 'masakari_fencing_attempts_total{driver="ipmi",result="success"}');
  } finally {
    ipmi.remove();
  }
});

t('requireFencing: the BMC proof is the proof; no FAR needed', async () => {
  const h = await harness({ requireFencing: true });
  await h.until(() => h.get().status?.phase === 'finished');
  assert.is(evacuated(h), 1);
  assert.is(h.events.filter((e) => e.includes('WaitingForFencing')).length, 0);
});

t.run();
