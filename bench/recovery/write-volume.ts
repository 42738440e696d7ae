// The "Journal write volume" section of docs/benchmarks.md (`run.ts --mode e2e
// --section write-volume`): what one host recovery costs etcd, per size and
// per fencing variant (no BMC, a Redfish BMC, a Redfish BMC that fails its
// first power-offs), with the extra of each fenced row over the unfenced row
// of the same size beside it.

/** How the failed host is fenced: no spec.fencing, or a fake Redfish BMC failing its first `failures` power-offs. */
export interface FencingVariant {
  driver: 'none' | 'redfish';
  /** Power-offs the BMC answers with HTTP 500 before it obeys (each a failed attempt, retried with backoff). */
  failures: number;
}

/** What one recovery cost etcd, from etcd's own /metrics (client URL). */
export interface EtcdGrowth {
  /** etcd_mvcc_db_total_size_in_bytes after minus before (the database file; grows in pages). */
  dbGrowthBytes: number;
  /** etcd_network_client_grpc_received_bytes_total after minus before: what the API server sent etcd. */
  receivedBytes: number;
  /** etcd_mvcc_put_total after minus before: revisions written. */
  puts: number;
}

/** What etcd received while nothing happened, just before the notification: leases, the API server's own writes. */
export interface Background {
  seconds: number;
  receivedBytes: number;
  puts: number;
}

export interface E2eResult {
  instances: number;
  latencyMs: number;
  fencing: FencingVariant;
  /** Which repetition of this size and variant (1-based, `--repeat`). */
  round: number;
  measuredMs: number;
  evacuateCalls: number;
  etcd: EtcdGrowth;
  /** The same counters over an idle window right before the POST, to take out of the recovery's figures. */
  background: Background;
  /** Writes the API server served during the recovery, by resource (writesByResource), every client's. */
  writes: Record<string, number>;
  /** The finished Notification as the API server returns it, JSON bytes. */
  notificationBytes: number;
  /** Journal pages (ConfigMaps) the status budget moved history into, and their JSON bytes. */
  journalPages: number;
  journalPageBytes: number;
  /** Events in the run's namespace once the recovery finished. */
  events: number;
  /** Those Events by reason. */
  eventReasons: Record<string, number>;
  /** Requests the BMC received (0 without one). */
  bmcRequests: number;
  /** The machine's 1-minute load average when the recovery finished. */
  load1: number;
}

/** `none`, `redfish`, or `redfish:N` (the BMC fails its first N power-offs), comma-separated. */
export function parseFencing(spec: string): FencingVariant[] {
  return spec.split(',').map((s) => {
    const m = /^(none|redfish)(?::(\d+))?$/.exec(s.trim());
    if (!m || (m[1] === 'none' && m[2] !== undefined)) {
      throw new Error(`--fencing: "${s}" is not none, redfish or redfish:N`);
    }
    return { driver: m[1] as FencingVariant['driver'], failures: m[2] === undefined ? 0 : Number(m[2]) };
  });
}

export function fencingLabel(f: FencingVariant): string {
  if (f.driver === 'none') return 'unfenced';
  return f.failures === 0 ? 'fenced (Redfish)' : `fenced (Redfish), ${f.failures} failed power-off(s) first`;
}

/** Every size with every variant, `repeat` rounds of them; the variants of one size and round next to each other. */
export function e2eRuns<S extends { instances: number; latencyMs: number }>(
  sizes: S[],
  variants: FencingVariant[],
  repeat = 1,
): Array<S & { fencing: FencingVariant; round: number }> {
  const rounds = Array.from({ length: repeat }, (_, i) => i + 1);
  return sizes.flatMap((s) => rounds.flatMap((round) => variants.map((fencing) => ({ ...s, fencing, round }))));
}

const WRITE_VERBS = new Set(['POST', 'PUT', 'PATCH', 'APPLY', 'DELETE', 'DELETECOLLECTION']);

/**
 * The writes between two readings of apiserver_request_total summed by "VERB resource" (bench/lib/prometheus.ts
 * sampleSums), by resource: creates, updates, patches and deletes, status subresources included; 0s left out.
 */
export function writesByResource(before: Map<string, number>, after: Map<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [key, value] of after) {
    const [verb = '', resource = ''] = key.split(' ');
    if (!WRITE_VERBS.has(verb)) continue;
    const d = value - (before.get(key) ?? 0);
    if (d > 0) out[resource] = (out[resource] ?? 0) + d;
  }
  return out;
}

/** "notifications 40, events 9": the largest first, then by name; signed for an extra ("events +2"). */
export function formatWrites(w: Record<string, number>, sign = false): string {
  const entries = Object.entries(w)
    .filter(([, n]) => n !== 0)
    .sort(([a, x], [b, y]) => y - x || a.localeCompare(b));
  if (entries.length === 0) return sign ? '±0' : '0';
  return entries
    .map(([r, n]) => `${r} ${sign && n > 0 ? '+' : ''}${Number.isInteger(n) ? n : n.toFixed(1)}`)
    .join(', ');
}

/** Bytes and revisions of a recovery less the background rate over its duration (never below 0). */
export function netOfBackground(r: E2eResult): { receivedBytes: number; puts: number } {
  const seconds = r.measuredMs / 1000;
  const rate = (v: number) => (r.background.seconds > 0 ? v / r.background.seconds : 0);
  return {
    receivedBytes: Math.max(0, r.etcd.receivedBytes - rate(r.background.receivedBytes) * seconds),
    puts: Math.max(0, r.etcd.puts - rate(r.background.puts) * seconds),
  };
}

export interface Extra {
  /** Net of background (netOfBackground). */
  receivedBytes: number;
  puts: number;
  /** The Notification and its journal pages: what stays in etcd for this recovery. */
  keptBytes: number;
  events: number;
  /** API writes by resource, this run's minus the unfenced run's (leases included: a longer run renews more). */
  writes: Record<string, number>;
}

/** A fenced result minus the unfenced result of the same size, latency and round; undefined when there is none (or it is unfenced). */
export function extraOverUnfenced(r: E2eResult, all: E2eResult[]): Extra | undefined {
  if (r.fencing.driver === 'none') return undefined;
  const base = all.find(
    (x) =>
      x.fencing.driver === 'none' && x.instances === r.instances && x.latencyMs === r.latencyMs && x.round === r.round,
  );
  if (!base) return undefined;
  const [a, b] = [netOfBackground(r), netOfBackground(base)];
  return {
    receivedBytes: a.receivedBytes - b.receivedBytes,
    puts: a.puts - b.puts,
    keptBytes: keptBytes(r) - keptBytes(base),
    events: r.events - base.events,
    writes: diffWrites(r.writes, base.writes),
  };
}

function diffWrites(a: Record<string, number>, b: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) out[k] = (a[k] ?? 0) - (b[k] ?? 0);
  return out;
}

/** The median of a non-empty list (the mean of the middle two for an even count). */
export function median(values: number[]): number {
  const v = [...values].sort((x, y) => x - y);
  const mid = Math.floor(v.length / 2);
  return v.length % 2 ? (v[mid] as number) : ((v[mid - 1] as number) + (v[mid] as number)) / 2;
}

export interface ExtraSummary {
  instances: number;
  latencyMs: number;
  fencing: FencingVariant;
  rounds: number;
  /** Median over the rounds of each field of the extra. */
  median: Extra;
}

/** Per size and fenced variant (in first-seen order), the median extra over unfenced across the rounds. */
export function summarizeExtras(results: E2eResult[]): ExtraSummary[] {
  const groups = new Map<string, { r: E2eResult; extras: Extra[] }>();
  for (const r of results) {
    const x = extraOverUnfenced(r, results);
    if (!x) continue;
    const key = `${r.instances}@${r.latencyMs}/${fencingLabel(r.fencing)}`;
    const g = groups.get(key) ?? { r, extras: [] };
    g.extras.push(x);
    groups.set(key, g);
  }
  return [...groups.values()].map(({ r, extras }) => ({
    instances: r.instances,
    latencyMs: r.latencyMs,
    fencing: r.fencing,
    rounds: extras.length,
    median: {
      receivedBytes: median(extras.map((x) => x.receivedBytes)),
      puts: median(extras.map((x) => x.puts)),
      keptBytes: median(extras.map((x) => x.keptBytes)),
      events: median(extras.map((x) => x.events)),
      writes: Object.fromEntries(
        [...new Set(extras.flatMap((x) => Object.keys(x.writes)))].map((k) => [
          k,
          median(extras.map((x) => x.writes[k] ?? 0)),
        ]),
      ),
    },
  }));
}

/** The Notification and its journal pages, JSON bytes. */
export const keptBytes = (r: E2eResult): number => r.notificationBytes + r.journalPageBytes;

const mib = (b: number) => (b / 2 ** 20).toFixed(2);
const kib = (b: number) => (b / 1024).toFixed(1);
const signed = (s: string) => (s.startsWith('-') ? s : `+${s}`);

export interface SectionMeta {
  when: Date;
  /** Commit the operator ran from (bench/lib/docs.ts sourceRevision). */
  revision: string;
  /** 1-minute load average at the start of the benchmark. */
  loadAtStart: number;
  /** The command line's arguments, as run. */
  args: string;
}

/** Bytes a host recovery sends into etcd, from etcd's own metrics (`--section write-volume`). */
export function writeVolumeSection(results: E2eResult[], meta: SectionMeta): string {
  const extraCells = (x: Extra) =>
    `${signed(kib(x.receivedBytes))} | ${signed(x.puts.toFixed(0))} | ${signed(kib(x.keptBytes))} | ${signed(String(x.events))} | ${formatWrites(x.writes, true)}`;
  const rows = results.map((r) => {
    const x = extraOverUnfenced(r, results);
    const net = netOfBackground(r);
    const bg = r.background;
    const rate = bg.seconds > 0 ? `${kib(bg.receivedBytes / bg.seconds)} / ${(bg.puts / bg.seconds).toFixed(1)}` : '—';
    const pages = r.journalPages ? `${r.journalPages} (${kib(r.journalPageBytes)} KiB)` : '0';
    return `| ${r.instances} | ${(r.latencyMs / 1000).toFixed(1)} | ${r.round} | ${fencingLabel(r.fencing)} | ${(r.measuredMs / 1000).toFixed(1)} | ${r.load1.toFixed(1)} | ${mib(r.etcd.dbGrowthBytes)} | ${kib(r.etcd.receivedBytes)} | ${r.etcd.puts} | ${rate} | ${kib(net.receivedBytes)} | ${net.puts.toFixed(0)} | ${kib(r.notificationBytes)} | ${pages} | ${r.events} | ${r.bmcRequests} | ${formatWrites(r.writes)} | ${x ? extraCells(x) : '— | — | — | — | —'} |`;
  });
  const summary = summarizeExtras(results).map(
    (x) =>
      `| ${x.instances} | ${(x.latencyMs / 1000).toFixed(1)} | ${fencingLabel(x.fencing)} | ${x.rounds} | ${extraCells(x.median)} |`,
  );
  const loads = results.map((r) => r.load1);
  return [
    '## Journal write volume',
    '',
    `What one host recovery costs etcd, produced by \`node --import tsx bench/recovery/run.ts ${meta.args}\``,
    `(commit ${meta.revision}, ${meta.when.toISOString().slice(0, 16).replace('T', ' ')} UTC, shared 2-core machine,`,
    `1-minute load average ${meta.loadAtStart.toFixed(1)} at the start and ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)} at the end of the runs):`,
    'the whole operator on a local control plane, Nova played by the simulator, from the POST of the',
    "COMPUTE_HOST notification to `finished`. Read from etcd's own `/metrics` on its client URL before and after:",
    'the growth of `etcd_mvcc_db_total_size_in_bytes` (the database file, which grows in whole pages, reuses',
    'freed ones and is not given back until a defragmentation), the bytes etcd received from the API server',
    '(`etcd_network_client_grpc_received_bytes_total`, every object version written and every request) and the',
    'revisions written (`etcd_mvcc_put_total`). Everything on the control plane counts (Notification, journal',
    "pages, Events, HaHost flags, the engine's and the API server's leases). *Background* is the same two counters",
    'over an idle window of the same operator right before the POST, per second; *net* is the recovery less that',
    'rate times its duration. "Notification" is the size of the finished Notification object, "journal pages" the',
    'ConfigMaps its status budget moved settled history into (src/engine/status/budget.ts). "API writes" are the',
    'creates, updates, patches and deletes the API server served during the recovery, by resource, from its own',
    '`apiserver_request_total` (every client: the operator, the benchmark, the API server itself).',
    '',
    'Fencing (`--fencing none,redfish,redfish:N`): *unfenced* is a host without `spec.fencing`; *fenced* gives it',
    "`spec.fencing` on the simulator's fake Redfish BMC (a power-off takes its nova-compute down), the credentials",
    'Secret and the HaHost patch written before the idle window; *N failed power-off(s) first* has the BMC answer',
    'its first N power-offs with HTTP 500, each a failed attempt retried after the fence backoff (a',
    'FencingVerified=False write with a BmcPowerOffTask line; an Event for the first failure of each reason). The',
    'last five columns are the fenced run minus the unfenced run of the same size and round: net bytes (KiB), net',
    'revisions, the Notification with its pages (KiB), Events, API writes. The first table is their median over the',
    'rounds.',
    '',
    '| instances | evacuation latency (s) | fencing | rounds | extra net bytes (KiB) | extra net revisions | extra Notification + pages (KiB) | extra Events | extra API writes |',
    '|---:|---:|---|---:|---:|---:|---:|---:|---|',
    ...summary,
    '',
    'Every run:',
    '',
    '| instances | evacuation latency (s) | round | fencing | recovery (s) | load at end | etcd database growth (MiB) | bytes sent to etcd (KiB) | revisions written | background (KiB/s / revisions/s) | net bytes (KiB) | net revisions | Notification (KiB) | journal pages | Events | BMC requests | API writes | extra net bytes (KiB) | extra net revisions | extra Notification + pages (KiB) | extra Events | extra API writes |',
    '|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---|',
    ...rows,
    '',
  ].join('\n');
}

/**
 * The generated section followed by the hand-written part of the section it replaces (from its first "### "
 * heading to the section's end, e.g. a reading of the table and "### Earlier measurements"), kept verbatim.
 */
export function keepHandWritten(generated: string, previous: string | undefined): string {
  const lines = (previous ?? '').split('\n');
  const at = lines.findIndex((l) => l.startsWith('### '));
  const head = generated.trimEnd();
  if (at < 0) return `${head}\n`;
  return `${head}\n\n${lines.slice(at).join('\n').trimEnd()}\n`;
}
