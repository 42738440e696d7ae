// The one time source of the process, injectable so tests move time by hand
// instead of sleeping. Two ways to wait, because two kinds of caller wait:
// a workflow awaits sleep() in line (its fake advances time at once), while
// the work queue and rate limiters arm timers that fire when time reaches
// them (their fake fires them from advance()).

/** Opaque: whatever the clock's setTimeout returned. */
export type TimerHandle = unknown;

export interface Clock {
  now(): Date;
  /** Resolves after ms, or rejects with the signal's reason when aborted. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

/** setTimeout as a promise that rejects with the signal's reason when aborted (and clears its timer). */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export const systemClock: Clock = {
  now: () => new Date(),
  sleep: abortableSleep,
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** systemClock's now in epoch milliseconds, the default of the components that keep time as numbers. */
export const systemNowMs = (): number => systemClock.now().getTime();
