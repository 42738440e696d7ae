// Leader election against a real kube-apiserver with two candidates on short
// timings (lease 2 s, renew deadline 1.5 s, retry 0.25 s): exactly one leads;
// a graceful stop hands over at once; a leader cut off from the API server
// steps down before its lease can expire, so the two never lead together.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Registry } from 'prom-client';
import { KubeError } from '../../../src/k8s/client.ts';
import type { KubeClient } from '../../../src/k8s/client.ts';
import { RESOURCES } from '../../../src/k8s/resources.ts';
import { runLeaderElection } from '../../../src/runtime/leaderelection.ts';
import { runtimeEnv, until } from './env.ts';
import type { RuntimeEnv } from './env.ts';

const TIMINGS = { leaseDurationMs: 2000, renewDeadlineMs: 1500, retryPeriodMs: 250 };

interface Lease {
  spec: { holderIdentity?: string | null; leaseTransitions?: number; leaseDurationSeconds?: number };
}

interface Candidate {
  id: string;
  stop: AbortController;
  done: Promise<void>;
  leading: boolean;
  /** [start, end] of each leadership, by the local clock. */
  terms: Array<[number, number | undefined]>;
  leaders: string[];
  cutOff: boolean;
  metrics: Registry;
}

/** A client whose every call fails while candidate.cutOff is set (a partitioned node). */
function cuttable(real: KubeClient, c: () => Candidate): KubeClient {
  const wrapped = Object.create(real) as KubeClient;
  for (const m of ['get', 'create', 'replace'] as const) {
    const original = real[m].bind(real) as (...a: unknown[]) => Promise<unknown>;
    (wrapped as unknown as Record<string, unknown>)[m] = (...a: unknown[]) =>
      c().cutOff ? Promise.reject(new KubeError(0, 'NetworkError', 'partitioned')) : original(...a);
  }
  return wrapped;
}

function candidate(env: RuntimeEnv, lease: string, id: string): Candidate {
  const c: Candidate = {
    id,
    stop: new AbortController(),
    done: Promise.resolve(),
    leading: false,
    terms: [],
    leaders: [],
    cutOff: false,
    metrics: new Registry(),
  };
  c.done = runLeaderElection({
    kube: cuttable(env.kube, () => c),
    namespace: env.namespace,
    name: lease,
    identity: id,
    signal: c.stop.signal,
    log: env.log,
    metrics: c.metrics,
    ...TIMINGS,
    onStartedLeading: async (signal) => {
      c.leading = true;
      c.terms.push([Date.now(), undefined]);
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      c.terms[c.terms.length - 1]![1] = Date.now();
      c.leading = false;
    },
    onStoppedLeading: () => undefined,
    onNewLeader: (leader) => c.leaders.push(leader),
  });
  return c;
}

async function masterStatus(c: Candidate, lease: string): Promise<number> {
  const m = (await c.metrics.getMetricsAsJSON()).find((x) => x.name === 'leader_election_master_status');
  return Number(m?.values.find((v) => v.labels.name === lease)?.value);
}

function overlaps(a: Candidate, b: Candidate): boolean {
  const now = Date.now();
  return a.terms.some(([s1, e1]) => b.terms.some(([s2, e2]) => s1 < (e2 ?? now) && s2 < (e1 ?? now)));
}

const t = suite<{ env: RuntimeEnv }>('leader-election');
t.before(async (ctx) => {
  ctx.env = await runtimeEnv('rt-leader');
});
t.after(async (ctx) => {
  await ctx.env.close();
});

t('exactly one of two candidates leads and the other learns who', async ({ env }) => {
  const a = candidate(env, 'one-leader', 'cand-a');
  await until(() => a.leading, 10_000, 'a leads');
  const b = candidate(env, 'one-leader', 'cand-b');
  await new Promise((r) => setTimeout(r, 1500));
  assert.ok(a.leading);
  assert.not.ok(b.leading);
  assert.ok(b.leaders.includes('cand-a'));
  assert.is(await masterStatus(a, 'one-leader'), 1);
  assert.is(await masterStatus(b, 'one-leader'), 0);
  const lease = await env.kube.get<Lease>(RESOURCES.leases, env.namespace, 'one-leader');
  assert.is(lease.spec.holderIdentity, 'cand-a');
  assert.is(lease.spec.leaseDurationSeconds, 2);
  a.stop.abort();
  b.stop.abort();
  await Promise.all([a.done, b.done]);
});

t('a graceful stop releases the lease and the other candidate takes over at once', async ({ env }) => {
  const a = candidate(env, 'handover', 'cand-a');
  await until(() => a.leading, 10_000, 'a leads');
  const b = candidate(env, 'handover', 'cand-b');
  await new Promise((r) => setTimeout(r, 500));
  const stoppedAt = Date.now();
  a.stop.abort();
  await a.done;
  const released = await env.kube.get<Lease>(RESOURCES.leases, env.namespace, 'handover');
  assert.ok(!released.spec.holderIdentity || released.spec.holderIdentity === 'cand-b', 'holder cleared on release');
  await until(() => b.leading, 5000, 'b leads');
  const handover = Date.now() - stoppedAt;
  assert.ok(handover < TIMINGS.leaseDurationMs, `hand-over took ${handover} ms, less than a lease duration`);
  assert.not.ok(overlaps(a, b));
  assert.is(await masterStatus(a, 'handover'), 0);
  const lease = await env.kube.get<Lease>(RESOURCES.leases, env.namespace, 'handover');
  assert.is(lease.spec.holderIdentity, 'cand-b');
  assert.is(lease.spec.leaseTransitions, 1);
  b.stop.abort();
  await b.done;
});

t('a leader cut off from the API server steps down; the other takes over after the lease expires', async ({ env }) => {
  const a = candidate(env, 'partition', 'cand-a');
  await until(() => a.leading, 10_000, 'a leads');
  const b = candidate(env, 'partition', 'cand-b');
  await new Promise((r) => setTimeout(r, 500));
  const cutAt = Date.now();
  a.cutOff = true;
  await until(() => !a.leading, 5000, 'a steps down');
  const steppedDown = Date.now() - cutAt;
  assert.ok(
    steppedDown <= TIMINGS.renewDeadlineMs + TIMINGS.retryPeriodMs + 500,
    `stepped down after ${steppedDown} ms`,
  );
  await until(() => b.leading, 10_000, 'b leads');
  const takeover = Date.now() - cutAt;
  assert.ok(takeover < 3 * TIMINGS.leaseDurationMs, `took over after ${takeover} ms`);
  assert.not.ok(overlaps(a, b), 'never two leaders at once');
  // Healed, a campaigns again but stays a follower while b renews.
  a.cutOff = false;
  await new Promise((r) => setTimeout(r, 1000));
  assert.not.ok(a.leading);
  assert.ok(b.leading);
  a.stop.abort();
  b.stop.abort();
  await Promise.all([a.done, b.done]);
});

t('the lead work returning early steps down and lets the lease go', async ({ env }) => {
  let runs = 0;
  const stop = new AbortController();
  const done = runLeaderElection({
    kube: env.kube,
    namespace: env.namespace,
    name: 'early-return',
    identity: 'cand-x',
    signal: stop.signal,
    log: env.log,
    ...TIMINGS,
    onStartedLeading: async () => {
      runs++;
    },
    onStoppedLeading: () => undefined,
  });
  await until(() => runs >= 2, 10_000, 're-campaigned after stepping down');
  stop.abort();
  await done;
  const lease = await env.kube.get<Lease>(RESOURCES.leases, env.namespace, 'early-return');
  assert.ok(!lease.spec.holderIdentity, 'released on stop');
});

t.run();
