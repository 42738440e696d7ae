import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { RecoveryFailed } from './context.ts';
import type { FakeServer } from '../../testing/fake-nova.ts';
import { novaServerError } from '../../testing/fake-nova.ts';
import { NovaBadRequest, NovaError, NovaConflict, NovaForbidden, NovaNotFound } from '../../openstack/types.ts';
import { scenario } from './testing/evacuation-scenario.ts';
import { planEvacuation } from './evacuation-rules.ts';
import { runHostFailure } from './host-failure.ts';
import { UNLOCK_ATTEMPTS } from '../nova/server-locks.ts';
import { systemClock } from '../../time/clock.ts';
import type { Clock } from '../../time/clock.ts';

/** The system clock with every sleep cut to at most 20 ms: the unlock backoff (seconds) runs in test time. */
const shortSleeps: Clock = { ...systemClock, sleep: (ms, signal) => systemClock.sleep(Math.min(ms, 20), signal) };

/** Runs the auto flow over one server and returns the server and its move afterwards. */
async function evacuateOne(
  server: Partial<FakeServer>,
  tweak?: (s: ReturnType<typeof scenario>) => void,
  o: { clock?: Clock } = {},
) {
  const s = scenario({ servers: [server], ...o });
  tweak?.(s);
  let error: unknown;
  try {
    await runHostFailure(s.engine.context(), s.engine.startFallbackRun);
  } catch (err) {
    error = err;
  }
  const id = s.servers[0]!.id;
  const after = s.nova.servers.get(id)!;
  const move = s.engine.vmoves()[0]!;
  const calls = s.nova
    .callLines()
    .filter((c) => c.endsWith(id))
    .map((c) => c.split(' ')[0]);
  s.nova.stop();
  return { after, move, calls, error, effects: s.engine.effects() };
}

test('planEvacuation: Masakari reset-state and stop-after rules', () => {
  assert.equal(planEvacuation('active', null, 1), { needsReset: false, stopAfter: true });
  assert.equal(planEvacuation('error', null, 4), { needsReset: false, stopAfter: true });
  assert.equal(planEvacuation('stopped', null, 4), { needsReset: false, stopAfter: false });
  assert.equal(planEvacuation('stopped', 'powering-on', 4), { needsReset: true, stopAfter: true });
  assert.equal(planEvacuation('active', 'rebooting', 1), { needsReset: true, stopAfter: false });
  assert.equal(planEvacuation('paused', null, 3), { needsReset: true, stopAfter: true });
  assert.equal(planEvacuation('resized', null, 1), { needsReset: true, stopAfter: false });
  assert.equal(planEvacuation('resized', null, 4), { needsReset: true, stopAfter: true });
});

test('active instance: locked during recovery, unlocked after, stays active; one GET (and the migrations baseline) before the lock', async () => {
  const { after, move, calls, effects } = await evacuateOne({});
  assert.is(after.vmState, 'active');
  assert.is(after.locked, false);
  assert.equal(calls.slice(0, 4).sort(), ['evacuate', 'getServer', 'listMigrations', 'lockServer']);
  assert.equal(calls.slice(2, 4), ['lockServer', 'evacuate']);
  assert.ok(calls.includes('unlockServer'));
  assert.is(move.status, 'succeeded');
  assert.ok(move.startTime && move.endTime);
  assert.match(move.startTime!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  const lock = Object.keys(effects).filter((k) => k.startsWith('lock:') || k.startsWith('unlock:'));
  assert.is(lock.length, 2);
  assert.ok(
    effects[lock.find((k) => k.startsWith('unlock:'))!]!.seq > effects[lock.find((k) => k.startsWith('lock:'))!]!.seq,
  );
});

test('an instance a user locked is not locked or unlocked by us', async () => {
  const { after, calls } = await evacuateOne({ locked: true });
  assert.is(after.locked, true);
  assert.not.ok(calls.includes('lockServer'));
  assert.not.ok(calls.includes('unlockServer'));
});

test('stopped instance is evacuated and stays stopped without a stop call', async () => {
  const { after, move, calls } = await evacuateOne({ vmState: 'stopped' });
  assert.is(after.vmState, 'stopped');
  assert.not.ok(calls.includes('stopServer'));
  assert.not.ok(calls.includes('resetState'));
  assert.is(move.status, 'succeeded');
});

test('error instance ends stopped and back in error on the new host', async () => {
  const { after, move, calls } = await evacuateOne({ vmState: 'error' });
  assert.is(after.vmState, 'error');
  assert.is(after.powerState, 4);
  assert.is(after.host, 'compute-2');
  assert.ok(calls.includes('stopServer'));
  assert.is(calls.filter((c) => c === 'resetState').length, 1, 'reset to error only after the stop');
  assert.is(move.status, 'succeeded');
});

test('paused instance is reset to error, evacuated and stopped', async () => {
  const { after, calls } = await evacuateOne({ vmState: 'paused', powerState: 3 });
  assert.is(after.vmState, 'stopped');
  assert.equal(calls.slice(2, 5), ['lockServer', 'resetState', 'evacuate']);
});

test('resized instance: running → active; shut down → stopped', async () => {
  const running = await evacuateOne({ vmState: 'resized', powerState: 1 });
  assert.is(running.after.vmState, 'active');
  assert.not.ok(running.calls.includes('stopServer'));
  const off = await evacuateOne({ vmState: 'resized', powerState: 4 });
  assert.is(off.after.vmState, 'stopped');
  assert.ok(off.calls.includes('stopServer'));
});

test('active instance with a task_state is reset and comes back active', async () => {
  const { after, calls } = await evacuateOne({ vmState: 'active', taskState: 'rebooting' });
  assert.ok(calls.includes('resetState'));
  assert.not.ok(calls.includes('stopServer'));
  assert.is(after.vmState, 'active');
});

test('evacuation not confirmed in wait_period_after_evacuation → "Failed reason: timeout."', async () => {
  const { move, error, after } = await evacuateOne({}, (s) => {
    s.nova.evacuateMs = 5_000;
    s.engine.config.DEFAULT.wait_period_after_evacuation = 0.3;
  });
  assert.instance(error, RecoveryFailed);
  assert.is(move.status, 'failed');
  assert.is(move.message, 'Failed reason: timeout.');
  assert.ok(move.endTime);
  assert.is(after.locked, false);
});

test('rebuild failing on the destination (vm_state error) fails the move with InstanceEvacuateFailed text', async () => {
  const { move } = await evacuateOne({}, (s) => s.nova.failingRebuilds.add(s.servers[0]!.id));
  assert.is(move.status, 'failed');
  assert.is(move.message, `Failed to evacuate instance ${move.instanceUuid}`);
});

test('a failing first GET fails the move instead of leaving it pending (B3)', async () => {
  const { move, error } = await evacuateOne({}, (s) => {
    s.nova.fault = (method) => (method === 'getServer' ? novaServerError('GET failed') : undefined);
  });
  assert.instance(error, RecoveryFailed);
  assert.is(move.status, 'failed');
  assert.is(move.message, 'GET failed (HTTP 500)');
  assert.is(move.startTime, null);
  assert.ok(move.endTime);
});

test("a Nova error fails the move with Masakari's translated text (nova.py translate_nova_exception)", async () => {
  const cases: Array<[NovaError, string]> = [
    [
      new NovaBadRequest(400, 'Compute service of cmp is still in use.'),
      'Invalid input received: Compute service of cmp is still in use. (HTTP 400)',
    ],
    [new NovaForbidden(403, "Policy doesn't allow it."), "Policy doesn't allow it. (HTTP 403)"],
    [new NovaNotFound(404, 'Instance x could not be found.'), 'Resource could not be found.'],
    [new NovaConflict(409, "Cannot 'evacuate' instance x while it is in task_state rebuilding"), 'Conflict'],
    [novaServerError('Unexpected API Error.'), 'Unexpected API Error. (HTTP 500)'],
  ];
  for (const [err, text] of cases) {
    const { move } = await evacuateOne({}, (s) => {
      s.nova.fault = (method) => (method === 'evacuate' ? err : undefined);
    });
    assert.is(move.status, 'failed');
    assert.is(move.message, text);
  }
});

test('start_time is set only once the evacuate call is reached: a failing lock or reset leaves it null', async () => {
  for (const failing of ['lockServer', 'resetState']) {
    const { move, after } = await evacuateOne({ vmState: 'paused', powerState: 3 }, (s) => {
      s.nova.fault = (method) => (method === failing ? novaServerError(`${failing} refused`) : undefined);
    });
    assert.is(move.status, 'failed');
    assert.is(move.message, `${failing} refused (HTTP 500)`);
    assert.is(move.startTime, null, `${failing} failed before the evacuation started`);
    assert.ok(move.endTime);
    assert.is(after.locked, false);
  }
  const { move } = await evacuateOne({}, (s) => {
    s.nova.fault = (method) => (method === 'evacuate' ? novaServerError('evacuate refused') : undefined);
  });
  assert.is(move.status, 'failed');
  assert.ok(move.startTime, 'the evacuate call itself failed: the evacuation had started');
});

test("a failing stop after evacuation reports Nova's error (B4) and still unlocks", async () => {
  const { move, after } = await evacuateOne({ vmState: 'error' }, (s) => {
    s.nova.fault = (method) => (method === 'stopServer' ? novaServerError('stop refused') : undefined);
  });
  assert.is(move.status, 'failed');
  assert.is(move.message, 'stop refused (HTTP 500)');
  assert.is(after.locked, false);
});

test('stop not confirmed in wait_period_after_power_off → timeout', async () => {
  const { move } = await evacuateOne({ vmState: 'error' }, (s) => {
    s.nova.stopMs = 5_000;
    s.engine.config.DEFAULT.wait_period_after_power_off = 0.2;
  });
  assert.is(move.message, 'Failed reason: timeout.');
});

test('dest_host is the compute service host, not the hypervisor node name (B11)', async () => {
  const { move, after } = await evacuateOne({ node: 'compute-1.example.org' });
  assert.is(after.host, 'compute-2');
  assert.is(move.destHost, 'compute-2');
});

test('a server that already left the failed host is confirmed, not evacuated again', async () => {
  const { move, calls } = await evacuateOne({}, (s) => {
    const original = s.nova.getServer.bind(s.nova);
    let first = true;
    s.nova.getServer = async (id, o) => {
      if (first) {
        first = false;
        s.nova.servers.get(id)!.host = 'compute-2';
      }
      return original(id, o);
    };
  });
  assert.not.ok(calls.includes('evacuate'));
  assert.is(move.status, 'succeeded');
  assert.is(move.destHost, 'compute-2');
});

test('unlock failures are retried and never fail the move', async () => {
  let unlockFailures = 0;
  const { move, after } = await evacuateOne({}, (s) => {
    s.nova.fault = (method) =>
      method === 'unlockServer' && unlockFailures++ < 2 ? novaServerError('busy') : undefined;
  });
  assert.is(move.status, 'succeeded');
  assert.is(after.locked, false);
});

test('a server left locked after finished: an unlock failing 5 times and then succeeding leaves it unlocked', async () => {
  let unlockFailures = 0;
  const { move, after, effects, calls } = await evacuateOne(
    {},
    (s) => {
      s.nova.fault = (method) =>
        method === 'unlockServer' && unlockFailures++ < 5 ? novaServerError('busy') : undefined;
    },
    { clock: shortSleeps },
  );
  assert.is(move.status, 'succeeded');
  assert.is(after.locked, false);
  assert.is(calls.filter((c) => c === 'unlockServer').length, 6);
  const id = Object.keys(effects).find((k) => k.startsWith('lock:'))!;
  assert.is(effects[id]!.state, 'done');
});

test('a server left locked after finished: an unlock that never succeeds stays journalled as held, after a bounded retry', async () => {
  const { move, after, effects, calls } = await evacuateOne(
    {},
    (s) => {
      s.nova.fault = (method) => (method === 'unlockServer' ? novaServerError('unlock refused') : undefined);
    },
    { clock: shortSleeps },
  );
  assert.is(move.status, 'succeeded', "the server did move; the lock is the run's to answer for");
  assert.is(after.locked, true);
  assert.is(calls.filter((c) => c === 'unlockServer').length, UNLOCK_ATTEMPTS);
  const id = Object.keys(effects).find((k) => k.startsWith('lock:'))!;
  assert.is(effects[id]!.state, 'intended', 'the engine core reads the journal to end the run error');
  assert.not.ok(Object.keys(effects).some((k) => k.startsWith('unlock:')));
});

/** Nova performs the evacuate, then the answer is lost on the way back (a timeout to the client). */
function loseEvacuateAnswer(s: ReturnType<typeof scenario>, o: { act: boolean }): void {
  const evacuate = s.nova.evacuate.bind(s.nova);
  s.nova.evacuate = async (id, target, call) => {
    if (o.act) await evacuate(id, target, call);
    throw new NovaError(0, 'POST /servers/{server_id}/action timed out after 60000 ms');
  };
}

/** Runs one evacuation with `tweak` and asserts Nova evacuated the server exactly once and the move succeeded. */
async function assertEvacuatedOnce(tweak: (s: ReturnType<typeof scenario>) => void): Promise<void> {
  let nova: ReturnType<typeof scenario>['nova'] | undefined;
  const { move, after, error } = await evacuateOne({}, (s) => {
    nova = s.nova;
    tweak(s);
  });
  assert.is(error, undefined);
  assert.is(move.status, 'succeeded');
  assert.is(after.host, 'compute-2');
  assert.is(after.locked, false);
  assert.is(nova!.evacuations.length, 1, 'one evacuation in Nova, confirmed, never sent again');
}

test('an evacuate whose answer was lost after Nova accepted it is confirmed, not failed (hypothesis 5)', async () => {
  await assertEvacuatedOnce((s) => loseEvacuateAnswer(s, { act: true }));
});

test('an unanswered evacuate that Nova never saw fails the move with the transport error, after asking Nova', async () => {
  let nova: ReturnType<typeof scenario>['nova'] | undefined;
  const { move, after, calls } = await evacuateOne({}, (s) => {
    nova = s.nova;
    loseEvacuateAnswer(s, { act: false });
  });
  assert.is(move.status, 'failed');
  assert.match(move.message ?? '', 'timed out');
  assert.is(after.host, 'compute-1');
  assert.is(after.locked, false);
  assert.is(nova!.evacuations.length, 0);
  assert.ok(calls.filter((c) => c === 'listMigrations').length >= 1, 'Nova was asked');
});

test("lease fencing per HTTP attempt: a 409 on evacuate while the old leader's evacuation is in flight is resolved by asking Nova", async () => {
  await assertEvacuatedOnce((s) => {
    const evacuate = s.nova.evacuate.bind(s.nova);
    s.nova.evacuate = async (id, target, call) => {
      // The deposed leader's evacuate reaches Nova first; ours then meets task_state rebuilding.
      await evacuate(id, target, call);
      await evacuate(id, target, call);
    };
  });
});

test('a 409 on evacuate that Nova shows no evacuation for still fails the move with Conflict', async () => {
  const { move, calls } = await evacuateOne({}, (s) => {
    s.nova.failNext('evacuate', new NovaConflict(409, 'Cannot evacuate while it is in task_state migrating'));
  });
  assert.is(move.status, 'failed');
  assert.is(move.message, 'Conflict');
  assert.ok(calls.filter((c) => c === 'listMigrations').length >= 2, 'Nova was asked after the 409');
});

test.run();
