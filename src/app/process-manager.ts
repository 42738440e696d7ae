// The process's manager (src/runtime/manager.ts), made in one place for the
// process (run.ts) and for tests (src/testing/component.ts). Its own module,
// not components.ts: main.ts loads that one for every command.
import type { AppContext } from './component.ts';
import { Manager } from '../runtime/manager.ts';
import type { ManagerOptions } from '../runtime/manager.ts';

/**
 * The one manager of a process whose components share `ctx`: Leases in
 * ctx.namespace, with the [operator] lease timings. The process makes its
 * manager here, and so do tests (src/testing/component.ts).
 */
export function createProcessManager(
  ctx: Pick<AppContext, 'kube' | 'namespace' | 'identity' | 'log' | 'metrics' | 'config'>,
  o: Pick<ManagerOptions, 'compactHeapAfterSync' | 'informerDeps' | 'clock'> = {},
): Manager {
  const { kube, namespace, identity, log, metrics, config } = ctx;
  return new Manager({ kube, namespace, identity, log, metrics, lease: config.operator, ...o });
}
