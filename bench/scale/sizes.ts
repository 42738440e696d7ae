// Sizes of bench/scale runs: `--sizes 1k,10k,100k`.

/** "1k" → 1000, "100k" → 100000, "2500" → 2500. */
export function parseSize(text: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([kKmM]?)\s*$/.exec(text);
  if (!m) throw new Error(`not a size: ${JSON.stringify(text)} (e.g. 1k, 10k, 100k, 2500)`);
  const n = Number(m[1]) * (m[2]?.toLowerCase() === 'k' ? 1e3 : m[2]?.toLowerCase() === 'm' ? 1e6 : 1);
  if (!Number.isInteger(n) || n < 10) throw new Error(`size must be a whole number >= 10, got ${text}`);
  return n;
}

/** 1000 → "1k", 100000 → "100k", 2500 → "2500". */
export function sizeLabel(n: number): string {
  return n >= 1000 && n % 1000 === 0 ? `${n / 1000}k` : String(n);
}

/** The objects a size stands for: N notifications on N / 10 hosts in N / 1000 segments (each at least 1). */
export function shape(n: number): { notifications: number; hosts: number; segments: number } {
  return { notifications: n, hosts: Math.max(1, Math.round(n / 10)), segments: Math.max(1, Math.round(n / 1000)) };
}
