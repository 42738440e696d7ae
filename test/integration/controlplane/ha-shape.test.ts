// The production-shaped control plane (startControlPlane({ shape: 'ha' })):
// three etcd members, two kube-apiservers, a TCP balancer. Through the
// balancer, with the operator's own client, reads, writes and watches survive
// the loss of the etcd leader and of one API server, and a reset of every
// balanced connection; without quorum, writes fail within the client's
// timeout instead of hanging, and work again once quorum is back; API server
// 1's link to etcd cut or delayed; a snapshot restored with resourceVersions
// moved forward, so old watches get 410. Stopping leaves no process behind.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { startControlPlane } from '../../../tools/controlplane/index.ts';
import type { ControlPlane, HaControls } from '../../../tools/controlplane/index.ts';
import { waitUntil } from '../../../tools/controlplane/http.ts';
import { isAlive } from '../../../tools/controlplane/processes.ts';
import { createKubeClient } from '../../../src/k8s/kube-client.ts';
import type { ClosableKubeClient } from '../../../src/k8s/kube-client.ts';
import { loadKubeConfig } from '../../../src/k8s/kubeconfig.ts';
import { RESOURCES } from '../../../src/k8s/resources.ts';
import { isTransient } from '../../../src/k8s/client.ts';
import type { WatchEvent } from '../../../src/k8s/client.ts';
import { usePrivateStateDir } from './state-dir.ts';

interface ConfigMap {
  apiVersion: 'v1';
  kind: 'ConfigMap';
  metadata: { name: string; namespace?: string; resourceVersion?: string };
  data?: Record<string, string>;
}

const NS = 'default';
const test = suite<{ stateDir: string }>('control plane, shape ha', { stateDir: '' });
usePrivateStateDir(test);

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls probe (a throw counts as not yet) until it returns a value; fails naming the last error. */
const eventually = <T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> =>
  waitUntil(what, probe, { timeoutMs, intervalMs: 250 });

/** An informer's loop in miniature: list, watch from the list's resourceVersion, relist after any end. */
function watchConfigMaps(kube: ClosableKubeClient): {
  seen: Set<string>;
  restarts: () => number;
  stop: () => Promise<void>;
} {
  const seen = new Set<string>();
  const abort = new AbortController();
  let restarts = 0;
  const loop = (async () => {
    while (!abort.signal.aborted) {
      try {
        const list = await kube.list<ConfigMap>(RESOURCES.configMaps, NS);
        for (const cm of list.items) seen.add(cm.metadata.name);
        if (abort.signal.aborted) return;
        await kube.watch<ConfigMap>(
          RESOURCES.configMaps,
          NS,
          { resourceVersion: list.metadata.resourceVersion, allowWatchBookmarks: true },
          (e: WatchEvent<ConfigMap>) => {
            if (e.type === 'ADDED' || e.type === 'MODIFIED') seen.add(e.object.metadata.name);
          },
          abort.signal,
        );
      } catch {
        // an API server died, the balancer reset, or quorum is gone: relist
      }
      if (abort.signal.aborted) return;
      restarts++;
      await sleep(250);
    }
  })();
  return {
    seen,
    restarts: () => restarts,
    stop: () => {
      abort.abort();
      return loop;
    },
  };
}

const configMap = (name: string): ConfigMap => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name },
  data: { at: new Date().toISOString() },
});

async function writeAndSee(
  kube: ClosableKubeClient,
  watcher: { seen: Set<string> },
  name: string,
  timeoutMs = 60_000,
): Promise<void> {
  // A timed-out create may have been committed: AlreadyExists then counts as written.
  await eventually(
    `${name} is written`,
    async () => {
      try {
        await kube.create(RESOURCES.configMaps, NS, configMap(name));
      } catch (e) {
        if ((e as { code?: number }).code !== 409) throw e;
      }
      return true;
    },
    timeoutMs,
  );
  const read = await eventually(`${name} is read back`, () => kube.get<ConfigMap>(RESOURCES.configMaps, NS, name));
  assert.is(read.metadata.name, name);
  await eventually(`the watch sees ${name}`, async () => (watcher.seen.has(name) ? true : undefined), timeoutMs);
}

test('survives the etcd leader, an API server and a balancer reset; without quorum writes time out, then recover; link faults; a restore', async () => {
  const cp: ControlPlane = await startControlPlane({ shape: 'ha', log: () => undefined });
  const ha: HaControls | undefined = cp.ha;
  const kubeconfig = loadKubeConfig({ path: cp.kubeconfigPath, env: {} });
  // the operator's client, with a short timeout so a hung write shows here as a clean failure
  const kube = createKubeClient(kubeconfig, { timeoutMs: 3_000, maxAttempts: 1 });
  const watcher = watchConfigMaps(kube);
  const procs: number[] = [];
  try {
    assert.ok(ha, 'shape ha has fault controls');
    assert.is(cp.shape, 'ha');
    assert.is(ha.etcdUrls.length, 3);
    assert.is(ha.apiServers.length, 2);
    assert.not.ok(ha.apiServers.includes(cp.server), 'the kubeconfig names the balancer, not an API server');

    // CRDs are installed through the balancer and serve objects
    const segment = await kube.create<{ metadata: { name: string } }>(RESOURCES.segments, NS, {
      apiVersion: 'masakari.openkeel.io/v1alpha1',
      kind: 'FailoverSegment',
      metadata: { name: 'ha-segment' },
      spec: { name: 'ha-segment', recoveryMethod: 'auto', serviceType: 'compute' },
    } as never);
    assert.is(segment.metadata.name, 'ha-segment');
    await writeAndSee(kube, watcher, 'before-faults');

    // the leader and one API server die together
    const leader = await eventually('an etcd leader', () => ha.etcdLeader());
    await ha.killEtcdMember(leader);
    await ha.killApiServer(0);
    await writeAndSee(kube, watcher, 'leader-and-apiserver-down');
    const newLeader = await eventually('a new etcd leader', () => ha.etcdLeader());
    assert.is.not(newLeader, leader);
    const got = await kube.get<{ metadata: { name: string } }>(RESOURCES.segments, NS, 'ha-segment');
    assert.is(got.metadata.name, 'ha-segment', 'reads of custom resources go on');
    await ha.startEtcdMember(leader);
    await ha.startApiServer(0);
    await writeAndSee(kube, watcher, 'restored');

    // the balancer resets every open connection, the watch's included
    const restartsBefore = watcher.restarts();
    assert.ok(ha.resetBalancer() >= 1, 'the watch was open through the balancer');
    await writeAndSee(kube, watcher, 'after-reset');
    assert.ok(watcher.restarts() > restartsBefore, 'the watch ended with the reset and was re-established');

    // quorum lost: two of three members down
    const survivor = (await eventually('an etcd leader', () => ha.etcdLeader()))!;
    const down = [0, 1, 2].filter((i) => i !== survivor);
    for (const i of down) await ha.killEtcdMember(i);
    const started = Date.now();
    let failed: unknown;
    try {
      await kube.create(RESOURCES.configMaps, NS, configMap('during-quorum-loss'));
    } catch (e) {
      failed = e;
    }
    const took = Date.now() - started;
    assert.ok(isTransient(failed), `a write without quorum fails as transient (retried later): ${String(failed)}`);
    assert.ok(took < 10_000, `the client gave up after ${took} ms, within its 3 s timeout plus connection set-up`);
    for (const i of down) await ha.startEtcdMember(i);
    await writeAndSee(kube, watcher, 'quorum-restored');
    const afterRestore = await kube.list<ConfigMap>(RESOURCES.configMaps, NS);
    const names = afterRestore.items.map((c) => c.metadata.name);
    for (const n of ['before-faults', 'leader-and-apiserver-down', 'restored', 'after-reset', 'quorum-restored'])
      assert.ok(names.includes(n), `${n} survived every fault`);

    // API server 1 cut off from etcd: a write it takes hangs (the client's timeout ends it), yet may be
    // committed once the link heals; delayed, it is slow; healed, it answers at once
    const direct = createKubeClient(
      {
        getCurrentCluster: () => ({ server: ha.apiServers[1]! }),
        applyToHTTPSOptions: (o) => kubeconfig.applyToHTTPSOptions(o),
      },
      { timeoutMs: 3_000, maxAttempts: 1 },
    );
    try {
      ha.setEtcdLink({ mode: 'partitioned' });
      let cutOff: unknown;
      await direct.create(RESOURCES.configMaps, NS, configMap('while-partitioned')).catch((e: unknown) => {
        cutOff = e;
      });
      assert.ok(isTransient(cutOff), `a write through the cut-off API server fails as transient: ${String(cutOff)}`);
      ha.setEtcdLink({ mode: 'delayed', ms: 400 });
      const slowFrom = Date.now();
      await eventually('a write through the delayed link', async () => {
        await direct.create(RESOURCES.configMaps, NS, configMap('while-delayed')).catch((e: unknown) => {
          if ((e as { code?: number }).code !== 409) throw e;
        });
        return true;
      });
      assert.ok(Date.now() - slowFrom >= 400, 'the delay is felt');
      ha.setEtcdLink({ mode: 'open' });
      await writeAndSee(kube, watcher, 'link-healed');
    } finally {
      ha.setEtcdLink({ mode: 'open' });
      await direct.close();
    }

    // a snapshot, a write after it, a restore: the write is gone, resourceVersions moved forward
    // (--bump-revision) and a watch from before the restore is answered 410 Gone
    const snapshotFile = join(cp.dir, 'snapshot.db');
    await ha.snapshot(snapshotFile);
    await writeAndSee(kube, watcher, 'after-snapshot');
    const rvBefore = Number((await kube.list<ConfigMap>(RESOURCES.configMaps, NS)).metadata.resourceVersion);
    await ha.restore(snapshotFile);
    const restored = await eventually('a list after the restore', () => kube.list<ConfigMap>(RESOURCES.configMaps, NS));
    const restoredNames = restored.items.map((c) => c.metadata.name);
    assert.ok(restoredNames.includes('link-healed'), 'what the snapshot had is back');
    assert.not.ok(restoredNames.includes('after-snapshot'), 'what came after it is gone');
    assert.ok(Number(restored.metadata.resourceVersion) > rvBefore, 'resourceVersions moved on, not back');
    let gone: unknown;
    await kube
      .watch<ConfigMap>(
        RESOURCES.configMaps,
        NS,
        { resourceVersion: String(rvBefore) },
        () => undefined,
        AbortSignal.timeout(10_000),
      )
      .catch((e: unknown) => {
        gone = e;
      });
    assert.is((gone as { code?: number } | undefined)?.code, 410, `a watch from before the restore: ${String(gone)}`);
  } finally {
    await watcher.stop();
    await kube.close();
    procs.push(cp.pids.watchdog, ...(ha?.pids() ?? []));
    await cp.stop();
  }
  await eventually(
    'no process of the control plane is left',
    async () => (procs.every((pid) => !isAlive(pid)) ? true : undefined),
    20_000,
  );
  assert.not.ok(existsSync(cp.dir), 'the temp dir is gone');
});

test.run();
