// Seeded random values for the fuzz tests (webhook AdmissionReviews, the
// config loader). A failing case prints its seed and reproduces with it.

/** mulberry32: a small, fast, seeded PRNG; returns floats in [0, 1). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const STRINGS = [
  '',
  ' ',
  'a',
  'x'.repeat(300),
  '\u0000',
  '💥',
  '../..',
  '<script>',
  'null',
  '1e999',
  '-1',
  'True',
  'CREATE',
];

export class Fuzzer {
  private readonly r: () => number;
  constructor(readonly seed: number) {
    this.r = prng(seed);
  }
  int(n: number): number {
    return Math.floor(this.r() * n);
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)] as T;
  }
  chance(p: number): boolean {
    return this.r() < p;
  }
  string(): string {
    if (this.chance(0.5)) return this.pick(STRINGS);
    return Array.from({ length: this.int(20) }, () => String.fromCharCode(32 + this.int(95))).join('');
  }
  /** Any JSON value, nested at most `depth` deep. */
  json(depth = 3): unknown {
    switch (this.int(depth > 0 ? 8 : 5)) {
      case 0:
        return null;
      case 1:
        return this.chance(0.5);
      case 2:
        return this.pick([0, -1, 1.5, 2 ** 53, -(2 ** 31), 1e300]);
      case 3:
      case 4:
        return this.string();
      case 5:
        return Array.from({ length: this.int(4) }, () => this.json(depth - 1));
      default:
        return Object.fromEntries(Array.from({ length: this.int(5) }, () => [this.string(), this.json(depth - 1)]));
    }
  }
  /** `base` with some of its fields replaced by random values, deleted, or added (deep). */
  mutate(base: unknown, depth = 4): unknown {
    if (depth === 0 || base === null || typeof base !== 'object') return this.chance(0.3) ? this.json(2) : base;
    if (Array.isArray(base)) return base.map((v) => this.mutate(v, depth - 1));
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(base)) {
      if (this.chance(0.08)) continue;
      out[k] = this.chance(0.15) ? this.json(2) : this.mutate(v, depth - 1);
    }
    if (this.chance(0.1)) out[this.string()] = this.json(2);
    return out;
  }
}
