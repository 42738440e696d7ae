import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Registry } from 'prom-client';
import { RESOURCES } from '../../k8s/resources.ts';
import { CONDITIONS } from '../../model/constants.ts';
import { REMEDIATION_ANNOTATIONS } from '../../model/remediation-constants.ts';
import type { HaHost, Notification, NotificationStatus, RecoveryLimits } from '../../model/types.ts';
import { scaledLimit } from '../../domain/recovery-limits.ts';
import { toNotificationRecord } from '../../store/mapping.ts';
import { getCondition } from '../../runtime/conditions.ts';
import { FakeNova } from '../../testing/fake-nova.ts';
import { until } from '../../testing/until.ts';
import type { Config } from '../../config/config.ts';
import { admitted } from '../intake/admitted-notification.ts';
import type { AdmittedNotification } from '../intake/admitted-notification.ts';
import { registerEngineMetrics } from '../telemetry/metrics.ts';
import { NotificationProcessor } from '../notification-processor.ts';
import type { FencingPrecondition, ProcessorDeps } from '../deps/processor-deps.ts';
import { BRAKE_REASONS, brakeVerdict, onMaintenanceFromRecovery, segmentLoad } from './recovery-brake.ts';
import type { BrakeInput, SegmentLoad } from './recovery-brake.ts';
import { host, notification, segment, testConfig, world, worldDeps } from '../testing/fixtures.ts';
import { taskflowDriver } from '../workflows/driver.ts';

// ---------------------------------------------------------------- the pure decision

const load = (hosts: number, unhealthy: string[] = [], recovering: string[] = []): SegmentLoad => ({
  hosts,
  unhealthy: new Set(unhealthy),
  recovering: new Set(recovering),
});

const input = (over: Partial<BrakeInput>): BrakeInput => ({
  hostUuid: 'h3',
  hostRecovery: true,
  limits: undefined,
  load: load(3),
  runs: 0,
  cap: 0,
  ...over,
});

const decision = suite('recovery brake: decision');

decision('no limits and no cap: every recovery starts, as in Masakari', () => {
  assert.equal(brakeVerdict(input({ load: load(3, ['h1', 'h2'], ['h1', 'h2']), runs: 500 })), { hold: false });
});

decision('maxUnhealthyHosts 1: the first host is admitted, a second is held with the counts and the bound', () => {
  const limits: RecoveryLimits = { maxUnhealthyHosts: 1 };
  assert.equal(brakeVerdict(input({ limits })), { hold: false });
  const v = brakeVerdict(input({ limits, load: load(3, ['h1'], ['h1']) }));
  assert.is(v.hold && v.reason, BRAKE_REASONS.unhealthy);
  assert.ok(v.hold && v.message.includes('recoveryLimits.maxUnhealthyHosts 1: 1 host of 3 is'), JSON.stringify(v));
  assert.ok(v.hold && v.message.includes('would make 2'));
  assert.ok(v.hold && v.message.includes(REMEDIATION_ANNOTATIONS.recoveryReleasedBy));
});

decision('a host already admitted adds nothing: its next notification is not held', () => {
  const v = brakeVerdict(input({ hostUuid: 'h1', limits: { maxUnhealthyHosts: 1 }, load: load(3, ['h1']) }));
  assert.equal(v, { hold: false });
});

decision('maxRecoveringHosts counts running recoveries only, not hosts left on maintenance', () => {
  const limits: RecoveryLimits = { maxRecoveringHosts: 1 };
  assert.equal(brakeVerdict(input({ limits, load: load(3, ['h1', 'h2'], []) })), { hold: false });
  const v = brakeVerdict(input({ limits, load: load(3, ['h1'], ['h1']) }));
  assert.is(v.hold && v.reason, BRAKE_REASONS.recovering);
});

decision('the unhealthy limit is checked first, then the recovering limit, then the global cap', () => {
  const v = brakeVerdict(
    input({ limits: { maxUnhealthyHosts: 1, maxRecoveringHosts: 1 }, load: load(3, ['h1'], ['h1']), runs: 9, cap: 1 }),
  );
  assert.is(v.hold && v.reason, BRAKE_REASONS.unhealthy);
});

decision('percentages are of the segment hosts, rounded down as NodeHealthCheck rounds maxUnhealthy', () => {
  assert.is(scaledLimit('50%', 3), 1);
  assert.is(scaledLimit('34%', 3), 1);
  assert.is(scaledLimit('66%', 3), 1);
  assert.is(scaledLimit('67%', 3), 2);
  assert.is(scaledLimit('100%', 3), 3);
  assert.is(scaledLimit('0%', 3), 0);
  assert.is(scaledLimit(2, 3), 2);
  // 33% of 3 hosts is 0.99: not even one host is recovered (the safe side, as NHC's maxUnhealthy).
  const v = brakeVerdict(input({ limits: { maxUnhealthyHosts: '33%' } }));
  assert.is(v.hold && v.reason, BRAKE_REASONS.unhealthy);
  assert.ok(v.hold && v.message.includes('"33%" (0 of 3 hosts, rounded down)'), JSON.stringify(v));
  assert.equal(brakeVerdict(input({ limits: { maxUnhealthyHosts: '34%' } })), { hold: false });
});

decision('the global cap holds any recovery type once that many runs are in flight; 0 is no cap', () => {
  const v = brakeVerdict(input({ hostRecovery: false, runs: 2, cap: 2 }));
  assert.is(v.hold && v.reason, BRAKE_REASONS.global);
  assert.ok(v.hold && v.message.includes('operator.max_concurrent_recoveries 2: 2 recovery runs in flight'));
  assert.equal(brakeVerdict(input({ hostRecovery: false, runs: 1, cap: 2 })), { hold: false });
  assert.equal(brakeVerdict(input({ hostRecovery: false, runs: 99, cap: 0 })), { hold: false });
});

decision('segment limits do not apply to instance or process recoveries', () => {
  const v = brakeVerdict(
    input({ hostRecovery: false, limits: { maxUnhealthyHosts: 0, maxRecoveringHosts: 0 }, load: load(3, ['h1']) }),
  );
  assert.equal(v, { hold: false });
});

decision.run();

// ---------------------------------------------------------------- counting

const counting = suite('recovery brake: counting');

const admittedHost = (name: string, uuid: string, segmentUuid = 'seg-uuid', over: Partial<HaHost> = {}): HaHost => {
  const h = host(name, uuid, segmentUuid);
  return { ...h, metadata: { ...h.metadata, generation: 1 }, ...over };
};

const latched = (h: HaHost, onMaintenance: boolean): HaHost => ({
  ...h,
  status: { ...h.status, onMaintenance, reserved: false, flagsGeneration: h.metadata.generation ?? 1 },
});

const inPhase = (name: string, phase: NotificationStatus | undefined, o = {}) => {
  const n = notification(name, 'COMPUTE_HOST', { event: 'STOPPED', host_status: 'NORMAL' }, o);
  return admitted({ ...n, status: { ...n.status, ...(phase ? { phase } : {}) } }) as AdmittedNotification;
};

counting('a host counts unhealthy from its recovery start until its maintenance from it is cleared', () => {
  const hosts = [
    latched(admittedHost('c1', 'h1'), true), // a finished recovery left it on maintenance
    admittedHost('c2', 'h2'),
    admittedHost('c3', 'h3'),
    admittedHost('c4', 'h4'),
    admittedHost('other', 'x1', 'other-seg'),
  ];
  const notifications = [
    inPhase('run', 'running', { hostUuid: 'h2' }),
    inPhase('err', 'error', { hostUuid: 'h3' }),
    inPhase('held', undefined, { hostUuid: 'h4' }), // new (held): does not count
    inPhase('elsewhere', 'running', { hostUuid: 'x1', segmentUuid: 'other-seg' }),
  ];
  const l = segmentLoad('seg-uuid', notifications, hosts, []);
  assert.is(l.hosts, 4);
  assert.equal([...l.unhealthy].sort(), ['h1', 'h2', 'h3']);
  assert.equal([...l.recovering], ['h2']);
});

counting("a person's maintenance is not a recovery's; a cleared one is back", () => {
  const person = admittedHost('c1', 'h1');
  const byPerson = latched({ ...person, spec: { ...person.spec, onMaintenance: true } }, true);
  assert.is(onMaintenanceFromRecovery(byPerson), false);
  const engine = latched(admittedHost('c2', 'h2'), true);
  assert.is(onMaintenanceFromRecovery(engine), true);
  // `openstack segment host update --on_maintenance False`: spec and status false at a new generation.
  const cleared = latched({ ...engine, metadata: { ...engine.metadata, generation: 2 } }, false);
  assert.is(onMaintenanceFromRecovery(cleared), false);
  // A latch from an older generation is overridden by the spec (a later spec write).
  const stale = { ...engine, metadata: { ...engine.metadata, generation: 3 } };
  assert.is(onMaintenanceFromRecovery(stale), false);
});

counting('a start between the brakes and its claim counts (two workers cannot both take the last slot)', () => {
  const l = segmentLoad('seg-uuid', [], [admittedHost('c1', 'h1')], [{ segmentUuid: 'seg-uuid', hostUuid: 'h1' }]);
  assert.equal([...l.unhealthy], ['h1']);
  assert.equal([...l.recovering], ['h1']);
});

counting.run();

// ---------------------------------------------------------------- the engine: three of three hosts fail at once

const HOSTS = ['compute-1', 'compute-2', 'compute-3'] as const;

async function massFailure(
  o: { config?: Config; fencing?: FencingPrecondition; approvalGuard?: ProcessorDeps['approvalGuard'] } = {},
) {
  const w = await world();
  const nova = new FakeNova({ stopMs: 0, evacuateMs: 0 });
  w.kube.seed(
    RESOURCES.segments,
    segment('seg', 'seg-uuid', {
      recoveryLimits: { maxUnhealthyHosts: 1 },
      ...(o.fencing ? { requireFencing: true } : {}),
    }),
  );
  HOSTS.forEach((name, i) => {
    w.kube.seed(RESOURCES.hosts, host(name, `host-uuid-${i + 1}`, 'seg-uuid', {}, i + 1));
    // No instances: a recovery disables the service, sets maintenance and ends finished without an evacuation.
    nova.addHost(name, { state: 'down' });
  });
  nova.addHost('spare');
  const events: string[] = [];
  const queue: string[] = [];
  const delayed: string[] = [];
  const p = new NotificationProcessor({
    ...worldDeps(w),
    config: o.config ?? testConfig(),
    nova,
    events: {
      onNotification: (n, type, reason, message) => events.push(`${n.metadata.name} ${type} ${reason}: ${message}`),
      onHost: () => {},
    },
    driver: taskflowDriver(),
    ...(o.fencing ? { fencing: o.fencing } : {}),
    ...(o.approvalGuard ? { approvalGuard: o.approvalGuard } : {}),
    enqueue: (k) => queue.push(k),
  });
  p.startLeading(new AbortController().signal);
  const settle = async () => {
    for (let i = 0; i < 200; i++) {
      while (queue.length > 0) {
        const key = queue.shift() ?? '';
        const { requeueAfterMs } = await p.reconcile(key);
        if (requeueAfterMs !== undefined) delayed.push(key);
      }
      await p.whenIdle();
      if (queue.length === 0) return;
    }
    throw new Error('did not settle');
  };
  const get = (name: string) => w.kube.peek<Notification>(RESOURCES.notifications, name);
  const phase = (name: string) => get(name).status?.phase ?? 'new';
  const held = (name: string) => getCondition(get(name).status?.conditions, CONDITIONS.recoveryHeld);
  HOSTS.forEach((name, i) => {
    const n = notification(
      `n${i + 1}`,
      'COMPUTE_HOST',
      { event: 'STOPPED', host_status: 'NORMAL', cluster_status: 'OFFLINE' },
      { hostUuid: `host-uuid-${i + 1}`, hostname: name, uuid: `uuid-n${i + 1}` },
    );
    w.kube.seed(RESOURCES.notifications, n);
    queue.push(n.metadata.name ?? '');
  });
  /** Someone sets recovery-released-by on `name`; resolves once the engine's cache has it. */
  const release = async (name: string, who: string) => {
    w.kube.mutate(
      RESOURCES.notifications,
      name,
      (n: Notification) => {
        n.metadata.annotations = { ...n.metadata.annotations, [REMEDIATION_ANNOTATIONS.recoveryReleasedBy]: who };
      },
      false,
    );
    await until(() => !!w.notifications.get(name)?.metadata.annotations?.[REMEDIATION_ANNOTATIONS.recoveryReleasedBy]);
  };
  return { w, nova, p, events, queue, delayed, settle, get, phase, held, release };
}

async function heldGauge(): Promise<Array<{ labels: Record<string, string | number>; value: number }>> {
  const registry = new Registry();
  registerEngineMetrics(registry);
  const metric = registry.getSingleMetric('masakari_recovery_held_notifications');
  return ((await metric?.get())?.values ?? []) as Array<{ labels: Record<string, string | number>; value: number }>;
}

const engine = suite('recovery brake: engine');

engine(
  'maxUnhealthyHosts 1, three of three hosts fail at once: one is recovered, two are held (condition, Event, metric), REST view unchanged',
  async () => {
    const m = await massFailure();
    const before = Object.fromEntries(['n2', 'n3'].map((k) => [k, toNotificationRecord(m.get(k))]));
    await m.settle();
    assert.is(m.phase('n1'), 'finished');
    assert.is(m.nova.service('compute-1').status, 'disabled');
    for (const k of ['n2', 'n3']) {
      assert.is(m.phase(k), 'new');
      const c = m.held(k);
      assert.is(c?.status, 'True');
      assert.is(c?.reason, 'SegmentUnhealthyLimit');
      assert.ok(c?.message.includes('recoveryLimits.maxUnhealthyHosts 1: 1 host of 3 is'), c?.message);
      // What a Masakari client sees did not change: still new, no message, no updated_at.
      assert.equal(toNotificationRecord(m.get(k)), before[k]);
    }
    assert.is(m.nova.service('compute-2').status, 'enabled', 'a held recovery makes no Nova call');
    assert.is(m.nova.service('compute-3').status, 'enabled');
    const heldEvents = m.events.filter((e) => e.includes(' RecoveryHeld: '));
    assert.equal(
      heldEvents.map((e) => e.split(' ')[0]),
      ['n2', 'n3'],
    );
    assert.equal(await heldGauge(), [
      { labels: { segment_uuid: 'seg-uuid', reason: 'SegmentUnhealthyLimit' }, value: 2 },
    ]);

    // Rechecks neither write nor event again.
    const rv = m.get('n2').metadata.resourceVersion;
    for (const k of m.delayed.splice(0)) m.queue.push(k);
    await m.settle();
    assert.is(m.get('n2').metadata.resourceVersion, rv);
    assert.is(m.events.filter((e) => e.includes(' RecoveryHeld: ')).length, 2);

    // The periodic task does not take a held notification for stuck (its generated_time is long past).
    m.w.clock.advance(120_000);
    await m.p.processUnfinished();
    await m.settle();
    assert.is(m.phase('n2'), 'new');
    assert.is(m.phase('n3'), 'new');
  },
);

engine(
  'the held ones start when the first host is back (maintenance cleared) and when an approver releases them',
  async () => {
    const m = await massFailure();
    await m.settle();
    assert.is(m.phase('n1'), 'finished');
    assert.is(m.w.kube.peek<HaHost>(RESOURCES.hosts, 'host-compute-1').status?.onMaintenance, true);

    // `openstack segment host update --on_maintenance False` on compute-1 (what the store's updateHost writes).
    m.w.kube.mutate(
      RESOURCES.hosts,
      'host-compute-1',
      (h: HaHost) => {
        h.spec.onMaintenance = false;
        h.metadata.annotations = { touched: 'yes' };
      },
      false,
    );
    m.w.kube.mutate(RESOURCES.hosts, 'host-compute-1', (h: HaHost) => {
      h.status = { ...h.status, onMaintenance: false, flagsGeneration: h.metadata.generation ?? 1 };
    });
    await until(() => m.w.hosts.get('host-compute-1')?.status?.onMaintenance === false);
    m.p.wakeHeld();
    await m.settle();
    const started = ['n2', 'n3'].filter((k) => m.phase(k) === 'finished');
    const still = ['n2', 'n3'].filter((k) => m.phase(k) === 'new');
    assert.is(started.length, 1, 'one held notification started');
    assert.is(still.length, 1, 'the other is held: the host just recovered counts now');
    const first = started[0] ?? '';
    assert.is(m.held(first)?.status, 'False');
    assert.is(m.held(first)?.reason, 'UnderLimit');

    // An approver lets the last one pass the brakes.
    const last = still[0] ?? '';
    await m.release(last, 'alice');
    m.queue.push(last);
    await m.settle();
    assert.is(m.phase(last), 'finished');
    assert.is(m.held(last)?.status, 'False');
    assert.is(m.held(last)?.reason, 'ReleasedByApprover');
    assert.ok(m.held(last)?.message.includes('"alice"'));
    assert.ok(
      m.events.some((e) => e.startsWith(`${last} Normal RecoveryReleased: Released by "alice"`)),
      m.events.join('\n'),
    );
    assert.equal(await heldGauge(), []);
  },
);

engine(
  'a recovery-released-by is not honoured while the safety-overrides binding is missing: the notification stays held and says why',
  async () => {
    let unguarded: string | undefined = 'ValidatingAdmissionPolicyBinding mo-safety-overrides does not exist: …';
    const m = await massFailure({ approvalGuard: { unguardedReason: async () => unguarded } });
    await m.settle();
    assert.is(m.phase('n2'), 'new');
    // Anyone who may patch a Notification (the built-in edit role) could have written it: no binding denies them.
    await m.release('n2', 'mallory');
    m.queue.push('n2');
    await m.settle();
    assert.is(m.phase('n2'), 'new', 'still held');
    assert.is(m.nova.service('compute-2').status, 'enabled', 'no Nova call');
    assert.is(m.held('n2')?.status, 'True');
    assert.ok(m.held('n2')?.message.includes('does not exist'), m.held('n2')?.message);
    assert.not.ok(
      m.events.some((e) => e.startsWith('n2 Normal RecoveryReleased')),
      m.events.join('\n'),
    );

    // The binding is back: the same annotation releases it.
    unguarded = undefined;
    m.queue.push('n2');
    await m.settle();
    assert.is(m.phase('n2'), 'finished');
    assert.is(m.held('n2')?.reason, 'ReleasedByApprover');
  },
);

engine('a held notification still expires per notifications_expired_interval', async () => {
  const m = await massFailure();
  await m.settle();
  assert.is(m.phase('n2'), 'new');
  m.w.clock.advance(86_400_000); // generated a few seconds before the clock's start; the default interval is one day
  await m.p.checkExpired();
  assert.is(m.phase('n2'), 'failed');
  assert.is(m.held('n2')?.status, 'False', 'not held any more: failed');
});

engine('operator.max_concurrent_recoveries 1 holds the others with GlobalRecoveryCap while one runs', async () => {
  const m = await massFailure({
    config: testConfig((c) => {
      c.operator.max_concurrent_recoveries = 1;
    }),
  });
  m.w.kube.mutate(
    RESOURCES.segments,
    'seg',
    (s: { spec: { recoveryLimits?: unknown } }) => {
      delete s.spec.recoveryLimits;
    },
    false,
  );
  await until(() => m.w.segments.get('seg')?.spec.recoveryLimits === undefined);
  // One reconcile at a time: the first claims its run; the others meet it running.
  for (const k of ['n1', 'n2', 'n3']) await m.p.reconcile(m.queue.shift() ?? k);
  assert.is(m.phase('n1'), 'running');
  assert.is(m.held('n2')?.reason, 'GlobalRecoveryCap');
  assert.is(m.held('n3')?.reason, 'GlobalRecoveryCap');
  await m.settle();
  await m.p.whenIdle();
  for (const k of m.delayed.splice(0)) m.queue.push(k);
  await m.settle();
  for (let i = 0; i < 5 && ['n2', 'n3'].some((k) => m.phase(k) !== 'finished'); i++) {
    for (const k of m.delayed.splice(0)) m.queue.push(k);
    await m.settle();
  }
  assert.equal(['n1', 'n2', 'n3'].map(m.phase), ['finished', 'finished', 'finished']);
});

engine(
  'brakes before the fencing gate: a held recovery asks for no proof; a released one waits for it, evented once',
  async () => {
    const asked: string[] = [];
    let fenced = false;
    const m = await massFailure({
      fencing: async (_n, hostName) => {
        asked.push(hostName);
        return fenced || hostName === 'compute-1'
          ? { proven: true, proof: 'test' }
          : { proven: false, missing: 'no proof' };
      },
    });
    await m.settle();
    assert.is(m.phase('n1'), 'finished');
    assert.equal(asked, ['compute-1'], 'the held ones were not looked at by the fencing gate');
    await m.release('n2', 'bob');
    m.queue.push('n2');
    await m.settle();
    for (let i = 0; i < 3; i++) {
      m.queue.push('n2');
      await m.settle();
    }
    assert.is(m.phase('n2'), 'new', 'released from the brakes, still waiting for proof of fencing');
    assert.is(m.events.filter((e) => e.startsWith('n2 Normal RecoveryReleased')).length, 1);
    assert.is(m.events.filter((e) => e.startsWith('n2 Warning WaitingForFencing')).length, 1);
    fenced = true;
    m.queue.push('n2');
    await m.settle();
    assert.is(m.phase('n2'), 'finished');
    assert.is(m.held('n2')?.reason, 'ReleasedByApprover');
    assert.is(m.held('n3')?.status, 'True', 'n3 is still held');
  },
);

engine.run();
