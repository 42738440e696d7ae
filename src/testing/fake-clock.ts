// A Clock for tests that only moves when told to: advance() fires the timers
// that come due, in due order, and sleep() advances virtual time at once, so
// a 180 s poll timeout takes microseconds and the number of polls is exact.

import type { Clock, TimerHandle } from '../time/clock.ts';

export class FakeClock implements Clock {
  private current: number;
  private nextId = 1;
  private readonly timers = new Map<number, { at: number; fn: () => void }>();
  /** Every sleep() asked for, in ms, in order. */
  readonly sleeps: number[] = [];

  constructor(start = Date.UTC(2026, 0, 2, 3, 4, 5, 678)) {
    this.current = start;
  }

  now(): Date {
    return new Date(this.current);
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const id = this.nextId++;
    this.timers.set(id, { at: this.current + Math.max(0, ms), fn });
    return id;
  }

  clearTimeout(handle: TimerHandle): void {
    this.timers.delete(handle as number);
  }

  /** Moves time forward, firing every timer that comes due (in due order). */
  advance(ms: number): void {
    const target = this.current + ms;
    for (;;) {
      let nextId: number | undefined;
      let nextAt = Infinity;
      for (const [id, t] of this.timers) {
        if (t.at <= target && t.at < nextAt) {
          nextAt = t.at;
          nextId = id;
        }
      }
      if (nextId === undefined) break;
      const timer = this.timers.get(nextId)!;
      this.timers.delete(nextId);
      this.current = Math.max(this.current, timer.at);
      timer.fn();
    }
    this.current = target;
  }

  async sleep(ms: number, signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    this.sleeps.push(ms);
    this.advance(ms);
    await Promise.resolve();
    signal?.throwIfAborted();
  }

  pendingTimers(): number {
    return this.timers.size;
  }
}
