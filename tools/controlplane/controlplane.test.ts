// startWithFreshPorts: a component that lost its port to another process is
// started again on new ports; any other failure is final.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startWithFreshPorts } from './controlplane.ts';
import { spawnInGroup, terminate } from './processes.ts';
import type { ManagedProcess } from './processes.ts';

const dir = mkdtempSync(join(tmpdir(), 'cp-unit-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

/** A stand-in component: fails like a port clash, fails otherwise, or keeps running. */
function component(kind: 'clash' | 'crash' | 'ok', n: number): ManagedProcess {
  const script = {
    clash: 'echo "listen tcp 127.0.0.1:4242: bind: address already in use" >&2; exit 1',
    crash: 'echo "invalid flag" >&2; exit 2',
    ok: 'exec sleep 30',
  }[kind];
  return spawnInGroup(`fake-${kind}`, 'sh', ['-c', script], join(dir, `fake-${n}.log`));
}

const readyUnlessExited = async (proc: ManagedProcess): Promise<void> => {
  await new Promise((r) => setTimeout(r, 150));
  if (proc.exit) throw new Error(`${proc.name} exited`);
};

test('a port clash is retried on new ports', async () => {
  const kinds = ['clash', 'clash', 'ok'] as const;
  let attempt = 0;
  const picked: number[] = [];
  const { proc, ports } = await startWithFreshPorts(
    'fake',
    (p: { n: number }) => component(kinds[p.n] ?? 'ok', p.n),
    readyUnlessExited,
    async () => {
      picked.push(attempt);
      return { n: attempt++ };
    },
  );
  assert.equal(picked, [0, 1, 2]);
  assert.is(ports.n, 2);
  assert.not.ok(proc.exit);
  await terminate(proc, 2_000);
});

test('three clashes in a row give up', async () => {
  let n = 0;
  try {
    await startWithFreshPorts(
      'fake',
      () => component('clash', 10 + n),
      readyUnlessExited,
      async () => ({ n: n++ }),
    );
    assert.unreachable();
  } catch (e) {
    assert.is((e as Error).message, 'fake: fake-clash exited');
    assert.is(n, 3);
  }
});

test('any other start failure is final', async () => {
  let n = 0;
  try {
    await startWithFreshPorts(
      'fake',
      () => component('crash', 20 + n),
      readyUnlessExited,
      async () => ({ n: n++ }),
    );
    assert.unreachable();
  } catch (e) {
    assert.is((e as Error).message, 'fake: fake-crash exited');
    assert.is(n, 1);
  }
});

test('a component that never gets ready is stopped before the error', async () => {
  let proc: ManagedProcess | undefined;
  try {
    await startWithFreshPorts(
      'fake',
      () => (proc = component('ok', 30)),
      async () => {
        throw new Error('timed out waiting for /health');
      },
      async () => ({}),
    );
    assert.unreachable();
  } catch (e) {
    assert.is((e as Error).message, 'fake: timed out waiting for /health');
  }
  assert.ok(proc?.exit, 'the process was stopped');
});

test.run();
