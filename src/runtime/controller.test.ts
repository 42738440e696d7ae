import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { Controller } from './controller.ts';
import { ItemExponentialRateLimiter } from './ratelimiter.ts';
import { TerminalError } from './types.ts';
import type { ReconcileResult } from './types.ts';
import { WorkQueue } from './workqueue.ts';
import { FakeClock } from '../testing/fake-clock.ts';

const log = pino({ level: 'silent' });
const tick = async (n = 5) => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

async function metric(registry: Registry, name: string, labels: Record<string, string>): Promise<number> {
  const m = (await registry.getMetricsAsJSON()).find((x) => x.name === name);
  const v = m?.values.find((x) => Object.entries(labels).every(([k, val]) => x.labels[k] === val));
  return Number(v?.value ?? NaN);
}

function harness(reconcile: (key: string, signal: AbortSignal) => Promise<ReconcileResult | void>, workers = 1) {
  const clock = new FakeClock();
  const registry = new Registry();
  const queue = new WorkQueue({ clock, rateLimiter: new ItemExponentialRateLimiter(10, 1000) });
  const c = new Controller({ name: 'test', reconcile, workers, queue, metrics: registry, log });
  const stop = new AbortController();
  const running = c.start(stop.signal);
  return { c, clock, registry, queue, stop, running };
}

test('success forgets the key and counts result=success', async () => {
  const seen: string[] = [];
  const h = harness(async (k) => {
    seen.push(k);
  });
  h.queue.addRateLimited('a');
  h.clock.advance(10);
  await tick();
  assert.equal(seen, ['a']);
  assert.is(h.queue.numRequeues('a'), 0);
  assert.is(
    await metric(h.registry, 'controller_runtime_reconcile_total', { controller: 'test', result: 'success' }),
    1,
  );
  h.stop.abort();
  await h.running;
});

test('an error requeues the key with growing per-key backoff', async () => {
  let calls = 0;
  const h = harness(async () => {
    calls++;
    throw new Error('boom');
  });
  h.c.enqueue('a');
  await tick();
  assert.is(calls, 1);
  assert.is(h.queue.numRequeues('a'), 1);
  h.clock.advance(9);
  await tick();
  assert.is(calls, 1, 'not before the 10 ms backoff');
  h.clock.advance(1);
  await tick();
  assert.is(calls, 2);
  h.clock.advance(19);
  await tick();
  assert.is(calls, 2, 'second backoff is 20 ms');
  h.clock.advance(1);
  await tick();
  assert.is(calls, 3);
  assert.is(await metric(h.registry, 'controller_runtime_reconcile_errors_total', { controller: 'test' }), 3);
  h.stop.abort();
  await h.running;
});

test('a TerminalError is not requeued and is counted as terminal', async () => {
  let calls = 0;
  const h = harness(async () => {
    calls++;
    throw new TerminalError('cannot fix');
  });
  h.c.enqueue('a');
  await tick();
  h.clock.advance(10_000);
  await tick();
  assert.is(calls, 1);
  assert.is(h.queue.len(), 0);
  assert.is(await metric(h.registry, 'controller_runtime_terminal_reconcile_errors_total', { controller: 'test' }), 1);
  assert.is(await metric(h.registry, 'controller_runtime_reconcile_errors_total', { controller: 'test' }), 1);
  h.stop.abort();
  await h.running;
});

test('requeueAfterMs forgets the backoff history and requeues after the delay', async () => {
  let calls = 0;
  const h = harness(async () => {
    calls++;
    if (calls === 1) throw new Error('first fails');
    return calls === 2 ? { requeueAfterMs: 500 } : undefined;
  });
  h.c.enqueue('a');
  await tick();
  h.clock.advance(10);
  await tick();
  assert.is(calls, 2);
  assert.is(h.queue.numRequeues('a'), 0, 'history forgotten');
  h.clock.advance(499);
  await tick();
  assert.is(calls, 2);
  h.clock.advance(1);
  await tick();
  assert.is(calls, 3);
  assert.is(
    await metric(h.registry, 'controller_runtime_reconcile_total', { controller: 'test', result: 'requeue_after' }),
    1,
  );
  h.stop.abort();
  await h.running;
});

test('one key is never reconciled by two workers at once', async () => {
  let active = 0;
  let maxActive = 0;
  let calls = 0;
  const releases: Array<() => void> = [];
  const h = harness(async () => {
    calls++;
    active++;
    maxActive = Math.max(maxActive, active);
    await new Promise<void>((r) => releases.push(r));
    active--;
  }, 4);
  h.c.enqueue('a');
  await tick();
  h.c.enqueue('a');
  h.c.enqueue('a');
  await tick();
  assert.is(calls, 1, 'the re-adds wait for the running reconcile');
  releases.shift()!();
  await tick();
  assert.is(calls, 2, 'and then run exactly once more');
  releases.shift()!();
  await tick();
  assert.is(calls, 2);
  assert.is(maxActive, 1);
  h.stop.abort();
  await h.running;
});

test('different keys are reconciled concurrently up to the worker count', async () => {
  let active = 0;
  let maxActive = 0;
  const releases: Array<() => void> = [];
  const h = harness(async () => {
    active++;
    maxActive = Math.max(maxActive, active);
    await new Promise<void>((r) => releases.push(r));
    active--;
  }, 2);
  for (const k of ['a', 'b', 'c']) h.c.enqueue(k);
  await tick();
  assert.is(active, 2);
  assert.is(await metric(h.registry, 'controller_runtime_active_workers', { controller: 'test' }), 2);
  for (const r of releases.splice(0)) r();
  await tick();
  for (const r of releases.splice(0)) r();
  await tick();
  assert.is(maxActive, 2);
  h.stop.abort();
  await h.running;
});

test('stop aborts the reconcile signal and waits for in-flight work', async () => {
  let sawAbort = false;
  let finished = false;
  const h = harness(
    (_k, signal) =>
      new Promise<void>((resolve) => {
        signal.addEventListener('abort', () => {
          sawAbort = true;
          setTimeout(() => {
            finished = true;
            resolve();
          }, 20);
        });
      }),
  );
  h.c.enqueue('a');
  h.c.enqueue('b');
  await tick();
  h.stop.abort();
  await h.running;
  assert.ok(sawAbort);
  assert.ok(finished, 'start() resolved only after the reconcile returned');
  assert.is(h.queue.len(), 1, 'b was never started after shutdown');
});

test('keys enqueued before start are processed once it runs', async () => {
  const seen: string[] = [];
  const c = new Controller({
    name: 'early',
    log,
    reconcile: async (k) => {
      seen.push(k);
    },
  });
  c.enqueue('x');
  const stop = new AbortController();
  const running = c.start(stop.signal);
  await tick();
  assert.equal(seen, ['x']);
  stop.abort();
  await running;
});

test('shutdown gives up on a reconcile that ignores its signal after the deadline', async () => {
  const c = new Controller({
    name: 'stuck',
    log,
    shutdownTimeoutMs: 30,
    reconcile: () => new Promise(() => undefined),
  });
  c.enqueue('x');
  const stop = new AbortController();
  const running = c.start(stop.signal);
  await tick();
  stop.abort();
  const started = Date.now();
  await running;
  assert.ok(Date.now() - started < 1000);
});

test('the queue a controller makes reports workqueue metrics under its name', async () => {
  const registry = new Registry();
  let calls = 0;
  const c = new Controller({
    name: 'mq',
    log,
    metrics: registry,
    reconcile: async () => {
      if (++calls === 1) throw new Error('once');
    },
  });
  const stop = new AbortController();
  const running = c.start(stop.signal);
  c.enqueue('k');
  await new Promise((r) => setTimeout(r, 50));
  assert.is(calls, 2);
  assert.is(await metric(registry, 'workqueue_adds_total', { name: 'mq' }), 2);
  assert.is(await metric(registry, 'workqueue_retries_total', { name: 'mq' }), 1);
  assert.is(await metric(registry, 'workqueue_depth', { name: 'mq' }), 0);
  stop.abort();
  await running;
});

test('two controllers share one registry without clashing', async () => {
  const registry = new Registry();
  new Controller({ name: 'one', log, reconcile: async () => undefined, metrics: registry });
  new Controller({ name: 'two', log, reconcile: async () => undefined, metrics: registry });
  assert.is(await metric(registry, 'controller_runtime_reconcile_total', { controller: 'two', result: 'success' }), 0);
});

test.run();
