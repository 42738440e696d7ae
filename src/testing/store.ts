// A CR store on its own, for integration tests that seed or read through the
// REST repository beside the components under test. Its caches come from a
// manager made for it, as every store's do in the product (the store has no
// caches of its own); start() and stop() are that manager's.
import { Manager } from '../runtime/manager.ts';
import { createCrRepository } from '../store/index.ts';
import type { CrRepositoryHandle, CrRepositoryOptions } from '../store/index.ts';

export function standaloneStore(opts: Omit<CrRepositoryOptions, 'informerFactory'>): CrRepositoryHandle {
  const { kube, namespace, log } = opts;
  const manager = new Manager({ kube, namespace, identity: `test-store-${namespace}`, log });
  const repo = createCrRepository({ ...opts, informerFactory: manager.informerFactory });
  const stopRepo = repo.stop.bind(repo);
  return Object.assign(repo, {
    start: () => manager.start(),
    async stop(): Promise<void> {
      await stopRepo();
      await manager.stop();
    },
  });
}
