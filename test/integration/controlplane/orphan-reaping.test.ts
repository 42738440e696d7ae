// A control plane whose owner died without its watchdog acting (say both were
// SIGKILLed together, as a kill of the whole session does) is reaped by the next start:
// reapOrphans() kills the recorded process groups, removes the temp dir and
// the record, and says so. Records of live owners are left alone.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { reapOrphans } from '../../../tools/controlplane/index.ts';
import { mountsUnder } from '../../../tools/controlplane/mounts.ts';
import { isAlive, processStartTime } from '../../../tools/controlplane/processes.ts';
import { ownerRef, writeRecord } from '../../../tools/controlplane/registry.ts';
import { usePrivateStateDir } from './state-dir.ts';

const test = suite<{ stateDir: string }>('orphan reaping', { stateDir: '' });
usePrivateStateDir(test);

/** A stand-in component: its own process group, its command line naming dir (as etcd's --data-dir does). */
function fakeComponent(dir: string): number {
  const child = spawn('sh', ['-c', 'sleep 300', dir], { detached: true, stdio: 'ignore' });
  child.unref();
  return child.pid ?? 0;
}

/** The pid of a process that has exited (and been reaped). */
const deadPid = (): number => spawnSync('true').pid;

test('a control plane whose owner is dead is killed, its dir and record removed, with a message', async ({
  stateDir,
}) => {
  const dir = mkdtempSync(join(tmpdir(), 'masakari-cp-'));
  mkdirSync(join(dir, 'etcd'));
  const pid = fakeComponent(dir);
  const owner = deadPid();
  assert.not.ok(isAlive(owner));
  writeRecord({
    id: 'cp-dead-owner',
    dir,
    owner: { name: 'owner', pid: owner },
    processes: [{ name: 'etcd', pid, startTime: processStartTime(pid) }],
    startedAt: new Date().toISOString(),
  });
  const lines: string[] = [];
  const reaped = reapOrphans((l) => lines.push(l));
  assert.equal(
    reaped.map((r) => r.id),
    ['cp-dead-owner'],
  );
  assert.is(lines.length, 1);
  assert.match(
    lines[0] ?? '',
    `reaped orphan control plane cp-dead-owner (owner pid ${owner} is gone): killed etcd pid ${pid}`,
  );
  await new Promise((r) => setTimeout(r, 200));
  assert.not.ok(isAlive(pid), 'the component is killed');
  assert.not.ok(existsSync(dir), 'the temp dir is removed');
  assert.equal(readdirSync(stateDir), [], 'the record is removed');
});

test('an orphan whose dir still holds mounts (kubelet volumes, sandbox shm) is unmounted and removed', ({
  stateDir,
}) => {
  const dir = mkdtempSync(join(tmpdir(), 'masakari-cp-'));
  const volume = join(dir, 'kubelet', 'pods', 'p1', 'volumes', 'token');
  const shm = join(dir, 'containerd', 'sandboxes', 's1', 'shm');
  for (const m of [volume, shm]) {
    mkdirSync(m, { recursive: true });
    const res = spawnSync('mount', ['-t', 'tmpfs', 'tmpfs', m]);
    assert.is(res.status, 0, `mount needs root, as the cluster suite does: ${res.stderr?.toString()}`);
  }
  assert.equal(mountsUnder(dir).length, 2);
  writeRecord({
    id: 'cp-with-mounts',
    dir,
    owner: { name: 'owner', pid: deadPid() },
    processes: [],
    startedAt: new Date().toISOString(),
  });
  const lines: string[] = [];
  assert.equal(
    reapOrphans((l) => lines.push(l)).map((r) => r.id),
    ['cp-with-mounts'],
  );
  assert.match(lines[0] ?? '', `removed ${dir}`);
  assert.equal(mountsUnder(dir), [], 'the mounts are detached');
  assert.not.ok(existsSync(dir), 'the temp dir is removed');
  assert.equal(readdirSync(stateDir), [], 'the record is removed');
});

test('an orphan dir that cannot be removed is reported, kept on record, and does not stop the start', ({
  stateDir,
}) => {
  // The run dir sits on a file system remounted read-only above it, so
  // rm fails (EROFS) and no mount below the dir could be detached to help.
  const outer = mkdtempSync(join(tmpdir(), 'masakari-cp-ro-'));
  const dir = join(outer, 'run');
  const other = mkdtempSync(join(tmpdir(), 'masakari-cp-'));
  try {
    assert.is(spawnSync('mount', ['-t', 'tmpfs', 'tmpfs', outer]).status, 0);
    mkdirSync(join(dir, 'etcd'), { recursive: true });
    assert.is(spawnSync('mount', ['-o', 'remount,ro', outer]).status, 0);
    for (const [id, d] of [
      ['cp-stuck', dir],
      ['cp-other', other],
    ] as const) {
      writeRecord({ id, dir: d, owner: { name: 'owner', pid: deadPid() }, processes: [], startedAt: '' });
    }
    const lines: string[] = [];
    const reaped = reapOrphans((l) => lines.push(l)).map((r) => r.id);
    assert.equal(reaped, ['cp-other'], 'the other orphan is still reaped');
    assert.ok(
      lines.some((l) => l.startsWith('orphan control plane cp-stuck') && l.includes(`could not remove ${dir}`)),
      lines.join('\n'),
    );
    assert.ok(existsSync(dir));
    assert.equal(readdirSync(stateDir), ['cp-stuck.json'], 'kept on record for the next start');
  } finally {
    spawnSync('umount', ['-l', outer]);
    rmSync(outer, { recursive: true, force: true });
    rmSync(join(stateDir, 'cp-stuck.json'), { force: true });
  }
});

test('a control plane whose owner lives is left alone', ({ stateDir }) => {
  const dir = mkdtempSync(join(tmpdir(), 'masakari-cp-'));
  const pid = fakeComponent(dir);
  try {
    writeRecord({
      id: 'cp-live-owner',
      dir,
      owner: ownerRef(),
      processes: [{ name: 'etcd', pid }],
      startedAt: new Date().toISOString(),
    });
    assert.equal(
      reapOrphans(() => undefined),
      [],
    );
    assert.ok(isAlive(pid));
    assert.ok(existsSync(dir));
    assert.equal(readdirSync(stateDir), ['cp-live-owner.json']);
  } finally {
    process.kill(-pid, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    rmSync(join(stateDir, 'cp-live-owner.json'), { force: true });
  }
});

test('an owner pid reused by another process still counts as dead (start time differs)', ({ stateDir }) => {
  const dir = mkdtempSync(join(tmpdir(), 'masakari-cp-'));
  const pid = fakeComponent(dir);
  // our own pid with a start time it never had: a different, later process
  writeRecord({
    id: 'cp-reused-owner',
    dir,
    owner: { name: 'owner', pid: process.pid, startTime: '1' },
    processes: [{ name: 'kube-apiserver', pid, startTime: processStartTime(pid) }],
    startedAt: new Date().toISOString(),
  });
  assert.equal(
    reapOrphans(() => undefined).map((r) => r.id),
    ['cp-reused-owner'],
  );
  assert.equal(readdirSync(stateDir), []);
});

test('a recorded pid that now belongs to an unrelated process is not killed', () => {
  const dir = mkdtempSync(join(tmpdir(), 'masakari-cp-'));
  const unrelated = fakeComponent(join(tmpdir(), 'somewhere-else'));
  try {
    writeRecord({
      id: 'cp-pid-reused',
      dir,
      owner: { name: 'owner', pid: deadPid() },
      processes: [{ name: 'etcd', pid: unrelated }],
      startedAt: new Date().toISOString(),
    });
    const [reaped] = reapOrphans(() => undefined);
    assert.equal(reaped?.killed, []);
    assert.ok(isAlive(unrelated), 'its command line does not name the control plane dir');
  } finally {
    process.kill(-unrelated, 'SIGKILL');
  }
});

test.run();
