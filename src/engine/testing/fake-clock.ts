// A Clock for tests whose sleep advances virtual time at once, so a 180 s
// poll timeout takes microseconds and the number of polls is exact.

import type { Clock } from '../workflows/context.ts';

export class FakeClock implements Clock {
  private t: number;
  readonly sleeps: number[] = [];

  constructor(start = Date.UTC(2026, 0, 2, 3, 4, 5, 678)) {
    this.t = start;
  }

  now(): Date {
    return new Date(this.t);
  }

  advance(ms: number): void {
    this.t += ms;
  }

  async sleep(ms: number, signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    this.sleeps.push(ms);
    this.t += ms;
    await Promise.resolve();
    signal?.throwIfAborted();
  }
}
