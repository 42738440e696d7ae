// What the runs of one chaos session share: one control plane (owned here, so
// kube-apiserver can be frozen and restarted), one simulator process, and one
// namespace served by two engine and two api replicas that live across runs
// (restarted only when a fault kills them). Each run brings its own segment,
// hosts and servers (topology.ts), so runs never share an object.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startControlPlane, type ControlPlane } from '../../../tools/controlplane/index.ts';
import { createFleet, type Fleet } from './fleet.ts';
import { Kube } from './kube.ts';
import { checkProcesses } from './process-checks.ts';
import { BOUNDS, runOnce, type RunContext, type RunResult } from './scenario.ts';
import { startSimulatorProcess, type SimulatorProcess } from '../../../tools/simulator/process.ts';

/** Seeds of this session: MASAKARI_CHAOS_SEED=N is one run; else `runs` seeds from MASAKARI_CHAOS_BASE_SEED or a random base. */
export function sessionSeeds(runs: number, env = process.env): number[] {
  if (env.MASAKARI_CHAOS_SEED) return [Number(env.MASAKARI_CHAOS_SEED)];
  const base = env.MASAKARI_CHAOS_BASE_SEED ? Number(env.MASAKARI_CHAOS_BASE_SEED) : Math.floor(Math.random() * 1e6);
  return Array.from({ length: runs }, (_, i) => base + i);
}

/** The control plane's shape: MASAKARI_CHAOS_SHAPE=ha is the production-shaped one (`make chaos-ha`); default single. */
export function chaosShape(env = process.env): 'single' | 'ha' {
  const shape = env.MASAKARI_CHAOS_SHAPE ?? 'single';
  if (shape !== 'single' && shape !== 'ha') throw new Error(`MASAKARI_CHAOS_SHAPE: 'single' or 'ha', not '${shape}'`);
  return shape;
}

export interface Session {
  run(seed: number): Promise<RunResult>;
  /** What a run works with (for scenarios of their own, such as ha-restore.test.ts); every replica started first. */
  context(): Promise<RunContext>;
  /** A scenario of its own failed: keep the logs. */
  noteFailure(): void;
  /** Where the replicas' logs are (kept when a check failed). */
  logDir: string;
  /** Stops the replicas gracefully, then everything else; returns what the last checks found. */
  stop(): Promise<string[]>;
}

/** SIGTERM grace of a replica at the end (shutdown_timeout is 10 s). */
const STOP_GRACE_MS = 20_000;

export async function startSession(log: (line: string) => void, o: { shape?: 'single' | 'ha' } = {}): Promise<Session> {
  const logDir = mkdtempSync(path.join(tmpdir(), 'masakari-chaos-'));
  let cp: ControlPlane | undefined;
  let sim: SimulatorProcess | undefined;
  let fleet: Fleet | undefined;
  const namespace = `chaos-${process.pid}`;
  try {
    cp = await startControlPlane({ log, shape: o.shape ?? chaosShape() });
    // short latencies keep a run short; evacuations still overlap the faults
    sim = await startSimulatorProcess([
      '--hosts',
      'idle',
      '--evacuate-ms',
      '150',
      '--stop-ms',
      '100',
      '--start-ms',
      '100',
    ]);
    const kube = new Kube(cp.kubeconfigPath);
    await kube.createNamespace(namespace);
    fleet = await createFleet({
      kubeconfigPath: cp.kubeconfigPath,
      namespace,
      openstack: sim.credentials,
      logDir,
      readyTimeoutMs: BOUNDS.ready,
    });
    await Promise.all(fleet.all().map((s) => s.start()));
  } catch (e) {
    await Promise.all((fleet?.all() ?? []).map((s) => s.stop(STOP_GRACE_MS)));
    await sim?.stop();
    await cp?.stop();
    throw e;
  }
  const plane = cp;
  const simulator = sim;
  const replicas = fleet;
  // The replicas and the simulator are our children, not the control plane's: if this process is
  // stopped (the runner's timeout, Ctrl-C), take them along (the control plane's own exit hook
  // ends kube-apiserver and etcd, frozen or not).
  const killChildren = () => {
    for (const s of replicas.all()) s.current?.child.kill('SIGKILL');
    simulator.child.kill('SIGKILL');
  };
  const onSignal = (signal: NodeJS.Signals) => {
    killChildren();
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  process.on('exit', killChildren);
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  const kube = new Kube(plane.kubeconfigPath);
  let failures = 0;
  const context = async (): Promise<RunContext> => {
    // a run that failed half-way may have left a replica down: every run starts with all four up
    for (const s of replicas.all()) if (!s.current) await s.start();
    return {
      kube,
      namespace,
      fleet: replicas,
      apiserver: {
        pid: () => plane.pids.apiserver,
        restart: () => plane.restartApiServer(),
        ...(plane.ha ? { ha: plane.ha } : {}),
      },
      sim: simulator,
      log,
    };
  };
  return {
    logDir,
    context,
    async run(seed) {
      const result = await runOnce(seed, await context());
      if (simulator.exit) result.violations.push(`the simulator died: ${JSON.stringify(simulator.exit)}`);
      if (result.violations.length) failures++;
      return result;
    },
    noteFailure() {
      failures++;
    },
    async stop() {
      await Promise.all(replicas.all().map((s) => s.stop(STOP_GRACE_MS)));
      const problems = checkProcesses(replicas);
      if (simulator.exit) problems.push(`the simulator died: ${JSON.stringify(simulator.exit)} ${simulator.stderr()}`);
      await simulator.stop();
      await kube.deleteNamespace(namespace);
      await plane.stop();
      process.off('exit', killChildren);
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      if (!failures && !problems.length) rmSync(logDir, { recursive: true, force: true });
      return problems;
    },
  };
}
