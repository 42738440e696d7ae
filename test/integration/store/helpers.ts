// Shared set-up for the store's integration tests: a fresh namespace on the
// shared control plane, a KubeClient, and repositories opened on it (as many
// as a test needs, to play several facade replicas), each with the store
// reconcilers beside it on a manager of its own, as the api component runs
// them (unless `reconcilers: false`).
import { pino } from 'pino';
import { useNamespace } from '../../support/cluster.ts';
import { createKubeClient } from '../../../src/k8s/kube-client.ts';
import { loadConfig } from '../../../src/config/load.ts';
import type { KubeClient } from '../../../src/k8s/client.ts';
import { createCrRepository } from '../../../src/store/index.ts';
import type { CrRepositoryHandle, CrRepositoryOptions } from '../../../src/store/index.ts';
import { addStoreReconcilers } from '../../../src/reconcilers/component.ts';
import type { StoreReconcilerOptions } from '../../../src/reconcilers/component.ts';
import { Manager } from '../../../src/runtime/manager.ts';

export type OpenOptions = Partial<CrRepositoryOptions> &
  StoreReconcilerOptions & {
    /** Run the store reconcilers beside this repository; default true. */
    reconcilers?: boolean;
  };

export interface StoreEnv {
  namespace: string;
  kube: KubeClient;
  kubectl(args: string[], stdin?: string): Promise<{ code: number; stdout: string; stderr: string }>;
  open(opts?: OpenOptions): Promise<CrRepositoryHandle>;
  /** Another client on the namespace's control plane (the caller closes it). */
  newClient(): ReturnType<typeof createKubeClient>;
  close(): Promise<void>;
}

export async function storeEnv(prefix: string): Promise<StoreEnv> {
  const ns = await useNamespace(prefix);
  const kube = createKubeClient(ns.kc);
  const config = loadConfig({ env: {} }).config;
  const log = pino({ level: process.env.MASAKARI_TEST_LOG ?? 'silent' });
  const opened: CrRepositoryHandle[] = [];
  let n = 0;
  return {
    namespace: ns.namespace,
    kube,
    kubectl: (args, stdin) => ns.kubectl(args, stdin),
    newClient: () => createKubeClient(ns.kc),
    async open(opts = {}) {
      const {
        reconcilers = true,
        validators,
        sweepIntervalMs,
        retentionIntervalMs,
        retentionFirstAfterMs,
        ...store
      } = opts;
      const client = store.kube ?? kube;
      const manager = new Manager({
        kube: client,
        namespace: ns.namespace,
        identity: `${prefix}-replica-${++n}`,
        log,
        lease: config.operator,
      });
      const repo = createCrRepository({
        kube: client,
        namespace: ns.namespace,
        config,
        log,
        informerFactory: manager.informerFactory,
        ...store,
      });
      if (reconcilers) {
        addStoreReconcilers(manager, repo.parts, {
          ...(validators ? { validators } : {}),
          ...(sweepIntervalMs !== undefined ? { sweepIntervalMs } : {}),
          ...(retentionIntervalMs !== undefined ? { retentionIntervalMs } : {}),
          ...(retentionFirstAfterMs !== undefined ? { retentionFirstAfterMs } : {}),
        });
      }
      await manager.start();
      // Stopping a replica is stopping its manager: reconcilers, then caches, then the Lease.
      const replica = Object.assign(repo, { stop: () => manager.stop() });
      opened.push(replica);
      return replica;
    },
    async close() {
      for (const repo of opened) await repo.stop();
      await ns.cleanup();
    },
  };
}

export { eventually } from '../../support/eventually.ts';

export { segmentInput, hostInput } from '../../../src/store/testing/fixture.ts';

/** Asserts that `fn` rejects, with an error of `kind` or one `check` accepts. */
export async function rejects(
  fn: () => Promise<unknown>,
  check: (new (...args: never[]) => Error) | ((e: unknown) => boolean),
): Promise<unknown> {
  let error: unknown;
  try {
    await fn();
  } catch (e) {
    error = e;
  }
  if (error === undefined) throw new Error('expected a rejection, got a result');
  const ok =
    check.prototype instanceof Error || check === Error
      ? error instanceof (check as new () => Error)
      : (check as (e: unknown) => boolean)(error);
  if (!ok) throw new Error(`unexpected rejection: ${String(error)}`);
  return error;
}

/** Splits settled promises into values and errors. */
export async function settle<T>(promises: Promise<T>[]): Promise<{ ok: T[]; errors: unknown[] }> {
  const all = await Promise.allSettled(promises);
  const ok: T[] = [];
  const errors: unknown[] = [];
  for (const r of all) {
    if (r.status === 'fulfilled') ok.push(r.value);
    else errors.push(r.reason);
  }
  return { ok, errors };
}
