// The local control plane starts, serves a TLS-verified kubeconfig, and stops
// without leaving processes, files or records behind; it also dies with an
// owner that exits without stop() or is SIGKILLed (the watchdog).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defaultCrdDir, startControlPlane } from '../../../tools/controlplane/index.ts';
import { loadCrds } from '../../../tools/controlplane/crds.ts';
import { isAlive } from '../../../tools/controlplane/processes.ts';
import { runKubectl } from '../../support/cluster.ts';
import { usePrivateStateDir } from './state-dir.ts';

interface OwnerFacts {
  id: string;
  dir: string;
  server: string;
  pids: { etcd: number; apiserver: number; watchdog: number };
}

const OWNER = fileURLToPath(new URL('./owner.ts', import.meta.url));
const test = suite<{ stateDir: string }>('control plane lifecycle', { stateDir: '' });

usePrivateStateDir(test);

async function eventually(what: string, ok: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Starts owner.ts in a child process; resolves with the facts it prints once its control plane is up. */
function startOwner(mode: 'hang' | 'exit'): Promise<{ facts: OwnerFacts; pid: number; exited: Promise<void> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', OWNER, mode], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: process.env,
  });
  const exited = new Promise<void>((r) => child.on('exit', () => r()));
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString('utf8');
      const line = out.split('\n')[0];
      if (out.includes('\n') && line) resolve({ facts: JSON.parse(line) as OwnerFacts, pid: child.pid ?? 0, exited });
    });
    void exited.then(() => reject(new Error(`owner exited before printing its control plane: ${out}`)));
  });
}

const allGone = (f: OwnerFacts) => () =>
  !isAlive(f.pids.etcd) && !isAlive(f.pids.apiserver) && !isAlive(f.pids.watchdog) && !existsSync(f.dir);

test('starts, serves kubectl over verified TLS with the CRDs installed, and stops cleanly', async ({ stateDir }) => {
  const cp = await startControlPlane({ log: () => undefined });
  const facts = { id: cp.id, dir: cp.dir, server: cp.server, pids: cp.pids };
  try {
    assert.match(cp.server, /^https:\/\/127\.0\.0\.1:\d+$/);
    assert.ok(existsSync(join(stateDir, `${cp.id}.json`)), 'a record in the state dir while running');
    // no --insecure-skip-tls-verify: the kubeconfig carries the CA
    const version = await runKubectl(cp.kubeconfigPath, ['version', '-o', 'json']);
    assert.is(version.code, 0, version.stderr);
    assert.is(
      (JSON.parse(version.stdout) as { serverVersion: { gitVersion: string } }).serverVersion.gitVersion,
      'v1.34.4',
    );
    const crds = await runKubectl(cp.kubeconfigPath, ['get', 'crd', '-o', 'name']);
    const expected = loadCrds(defaultCrdDir()).map(
      (c) => `customresourcedefinition.apiextensions.k8s.io/${c.metadata.name}`,
    );
    assert.ok(expected.includes('customresourcedefinition.apiextensions.k8s.io/failoversegments.masakari.openkeel.io'));
    assert.equal(crds.stdout.trim().split('\n').sort(), expected.sort(), 'every CRD in crds/ is installed');
    const rbac = await runKubectl(cp.kubeconfigPath, ['auth', 'can-i', '*', '*']);
    assert.is(rbac.stdout.trim(), 'yes', 'the token user is in system:masters');
  } finally {
    await cp.stop();
  }
  assert.ok(allGone(facts)(), 'etcd, kube-apiserver and the watchdog are gone and the temp dir removed');
  assert.equal(readdirSync(stateDir), [], 'the record is removed');
  await cp.stop(); // idempotent
});

test('an owner that exits without stop() takes its control plane with it', async ({ stateDir }) => {
  const { facts, exited } = await startOwner('exit');
  await exited;
  await eventually('the control plane of the exited owner is gone', allGone(facts), 10_000);
  assert.equal(readdirSync(stateDir), []);
});

test('a SIGKILLed owner: the watchdog stops its control plane', async ({ stateDir }) => {
  const { facts, pid, exited } = await startOwner('hang');
  assert.ok(isAlive(facts.pids.apiserver) && isAlive(facts.pids.etcd) && isAlive(facts.pids.watchdog));
  process.kill(pid, 'SIGKILL');
  await exited;
  await eventually('the watchdog has stopped the orphaned control plane', allGone(facts), 20_000);
  assert.equal(readdirSync(stateDir), []);
});

test.run();
