// Finding, starting and stopping the components named by MASAKARI_COMPONENTS.
// Each lives in its own module with `createComponent(ctx)` (contract in
// component.ts) and is imported only when selected, so an API-only pod never
// loads the engine.

import { existsSync } from 'node:fs';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import type { ComponentName } from '../config/options.ts';
import type { AppContext, Component, ComponentFactory } from './component.ts';
import { systemClock } from '../time/clock.ts';

/** Raised for anything that stops the process from starting; main prints the message alone. */
export class StartupError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StartupError';
  }
}

// Module of each component, relative to src/.
export const COMPONENT_MODULES: Record<ComponentName, string> = {
  api: 'api/component',
  engine: 'engine/component',
  remediation: 'remediation/component',
  detection: 'detection/component',
};

export type FactoryLoader = (name: ComponentName) => Promise<ComponentFactory>;

/**
 * A loader that imports `<srcDir>/<module><extension>`. A module that is not
 * there gives a StartupError naming it, not a resolver stack trace.
 */
export function componentImporter(srcDir: URL, extension: string): FactoryLoader {
  return async (name) => {
    const relative = `${COMPONENT_MODULES[name]}${extension}`;
    const url = new URL(relative, srcDir);
    if (!existsSync(url)) {
      throw new StartupError(
        `component ${name}: module src/${relative} is not part of this build; remove ${name} from MASAKARI_COMPONENTS`,
      );
    }
    let mod: { createComponent?: unknown };
    try {
      mod = (await import(url.href)) as { createComponent?: unknown };
    } catch (e) {
      throw new StartupError(`component ${name}: loading src/${relative} failed: ${(e as Error).message}`, {
        cause: e,
      });
    }
    if (typeof mod.createComponent !== 'function') {
      throw new StartupError(`component ${name}: src/${relative} does not export createComponent(ctx)`);
    }
    return mod.createComponent as ComponentFactory;
  };
}

// Under tsx this file is src/app/components.ts; in the image it is
// dist/src/app/components.js. Components sit beside it with the same extension.
export const importComponentFactory: FactoryLoader = componentImporter(
  new URL('../', import.meta.url),
  extname(fileURLToPath(import.meta.url)),
);

export interface StartedComponent {
  name: ComponentName;
  component: Component;
}

/**
 * Starts the components one after another, in the order given. If one fails,
 * those already started are stopped again before the error is rethrown, so a
 * failed start leaves no listener or watch behind.
 */
export async function startComponents(
  names: readonly ComponentName[],
  ctx: AppContext,
  load: FactoryLoader,
  onStarted: (started: StartedComponent) => void,
  stopTimeoutMs: number,
): Promise<StartedComponent[]> {
  const started: StartedComponent[] = [];
  for (const name of names) {
    try {
      const factory = await load(name);
      const component = await factory(ctx);
      const entry = { name, component };
      started.push(entry);
      onStarted(entry);
      ctx.log.info({ component: name }, 'component started');
    } catch (e) {
      await stopComponents(started, stopTimeoutMs, ctx.log);
      if (e instanceof StartupError) throw e;
      throw new StartupError(`component ${name}: start failed: ${(e as Error).message}`, { cause: e });
    }
  }
  return started;
}

/**
 * Stops components in reverse start order (the API stops taking requests
 * before the engine hands its work over), each within what is left of one
 * shared deadline. Resolves with the names that failed or overran.
 */
export async function stopComponents(
  started: readonly StartedComponent[],
  timeoutMs: number,
  log: Logger,
): Promise<string[]> {
  const deadline = systemClock.now().getTime() + timeoutMs;
  const failed: string[] = [];
  for (const { name, component } of [...started].reverse()) {
    const left = Math.max(0, deadline - systemClock.now().getTime());
    let timer: NodeJS.Timeout | undefined;
    const overran = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), left);
    });
    try {
      const outcome = await Promise.race([component.stop().then(() => 'stopped' as const), overran]);
      if (outcome === 'timeout') {
        failed.push(name);
        log.error({ component: name, timeout_ms: timeoutMs }, 'component did not stop before the shutdown deadline');
      } else {
        log.info({ component: name }, 'component stopped');
      }
    } catch (e) {
      failed.push(name);
      log.error({ component: name, err: e }, 'component failed to stop cleanly');
    } finally {
      clearTimeout(timer);
    }
  }
  return failed;
}
