// One component on its own, started the way the process starts its
// components (src/app/run.ts): a manager made for it (createProcessManager),
// the component created with it, then the manager started; stop() stops the
// component, then the manager. Components never start or stop a manager
// themselves: the process does, or this.
import type { AppContext, Component } from '../app/component.ts';
import type { Manager } from '../runtime/manager.ts';
import { createProcessManager } from '../app/process-manager.ts';

export type ContextWithoutManager = Omit<AppContext, 'manager'>;

/** create(ctx) with a manager of its own; resolves once the manager started (caches synced, campaigns begun). */
export async function startComponent<C extends Component>(
  ctx: ContextWithoutManager,
  create: (ctx: AppContext) => Promise<C>,
): Promise<C & { manager: Manager }> {
  const manager = createProcessManager(ctx);
  let component: C;
  try {
    component = await create({ ...ctx, manager });
  } catch (e) {
    await manager.stop();
    throw e;
  }
  await manager.start();
  const stopComponent = component.stop.bind(component);
  return Object.assign(component, {
    manager,
    async stop(): Promise<void> {
      await stopComponent();
      await manager.stop();
    },
  });
}
