// Crash safety of a host recovery. The engine runs as a child process
// (crash-engine-child.ts) and is SIGKILLed at many points of a 20-instance
// evacuation: right after the run starts, during the service disable, after
// the moves are recorded, with evacuations in flight, and at several stages of
// completion. Each time a new engine process starts; half of them keep the
// dead one's identity (a pod restarted in place takes the Lease back at once),
// half have a new one (the Lease must expire first). At the end: the
// notification is finished in its first run, every instance was evacuated
// exactly once (the simulator counts accepted evacuate actions per server),
// and no server is left locked.
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Notification } from '../../../src/model/types.ts';
import { assertEvacuatedOnce, engineEnv, eventually, HOST_DOWN, waitPhase } from './support.ts';
import { killEngineProcess, startEngineProcess } from './engine-process.ts';
import type { EngineProcess } from './engine-process.ts';

const INSTANCES = 20;

/** Kill points, in the order a recovery passes them. */
const KILL_POINTS: Array<{ name: string; reached: (n: Notification) => boolean }> = [
  { name: 'run started', reached: (n) => n.status?.phase === 'running' },
  {
    name: 'service disable in progress',
    reached: (n) => (n.status?.recoveryWorkflowDetails ?? []).some((e) => e.progressDetails.length > 0),
  },
  { name: 'moves recorded', reached: (n) => (n.status?.vmoves?.length ?? 0) > 0 },
  { name: 'evacuations in flight', reached: (n) => (n.status?.vmoves ?? []).some((m) => m.status === 'ongoing') },
  { name: '3 evacuated', reached: (n) => succeeded(n) >= 3 },
  { name: '7 evacuated', reached: (n) => succeeded(n) >= 7 },
  { name: '12 evacuated', reached: (n) => succeeded(n) >= 12 },
  { name: '17 evacuated', reached: (n) => succeeded(n) >= 17 },
];

const succeeded = (n: Notification): number => (n.status?.vmoves ?? []).filter((m) => m.status === 'succeeded').length;

test('SIGKILL at many points of a 20-instance host recovery: finished, each instance evacuated once, nothing left locked', async () => {
  const env = await engineEnv('engine-crash', ['compute-1', 'compute-2', 'compute-3', 'compute-4']);
  const logPath = join(tmpdir(), `engine-crash-${env.namespace}.log`);
  let child: EngineProcess | undefined;
  try {
    const seg = await env.segment('seg');
    await env.host('compute-1', seg);
    const ids = Array.from(
      { length: INSTANCES },
      (_, i) =>
        env.sim.state.addServer({
          name: `vm-${i}`,
          host: 'compute-1',
          metadata: { HA_Enabled: i % 2 === 0 ? 'True' : 'False' },
        }).id,
    );
    env.sim.state.latencies.evacuate = 400;
    env.sim.state.failHost('compute-1');

    child = await startEngineProcess(env, 'engine-pod-0', logPath);
    const name = await env.notify('COMPUTE_HOST', 'compute-1', HOST_DOWN);

    const killedAt: string[] = [];
    for (const [i, point] of KILL_POINTS.entries()) {
      const n = await eventually(
        point.name,
        () => env.get(name),
        (x) => point.reached(x) || x.status?.phase !== 'running' || !x.status,
        60_000,
      );
      if (n.status?.phase !== 'running' && n.status?.phase !== undefined) break;
      await killEngineProcess(child);
      killedAt.push(`${point.name} (${succeeded(await env.get(name))} done)`);
      // Even restarts keep the pod name (immediate take-over); odd ones are a new pod (Lease expiry).
      child = await startEngineProcess(env, i % 2 === 0 ? 'engine-pod-0' : `engine-pod-${i + 1}`, logPath);
    }
    assert.ok(killedAt.length >= 5, `killed only at: ${killedAt.join(', ')}`);

    const done = await waitPhase(env, name, ['finished', 'error', 'failed'], 120_000);
    assert.is(done.status?.phase, 'finished', `${JSON.stringify(done.status?.engine)} (log: ${logPath})`);
    assert.is(done.status?.runs, 1);
    const moves = done.status?.vmoves ?? [];
    assert.is(moves.length, INSTANCES);
    assert.ok(
      moves.every((m) => m.status === 'succeeded'),
      JSON.stringify(moves.filter((m) => m.status !== 'succeeded')),
    );
    assertEvacuatedOnce(env.sim, ids, 'compute-1');
    rmSync(logPath, { force: true });
  } finally {
    env.sim.state.latencies.evacuate = 0;
    if (child) await killEngineProcess(child);
    await env.close();
  }
});

test.run();
