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

export interface E2eResult {
  instances: number;
  latencyMs: number;
  fencing: FencingVariant;
  /** Which repetition of this size and variant (1-based, `--repeat`). */
  round: number;
  measuredMs: number;
  evacuateCalls: number;
  etcd: EtcdGrowth;
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

export interface Extra {
  dbGrowthBytes: number;
  receivedBytes: number;
  puts: number;
  /** The Notification and its journal pages: what stays in etcd for this recovery. */
  keptBytes: number;
  events: number;
}

/** A fenced result minus the unfenced result of the same size, latency and round; undefined when there is none (or it is unfenced). */
export function extraOverUnfenced(r: E2eResult, all: E2eResult[]): Extra | undefined {
  if (r.fencing.driver === 'none') return undefined;
  const base = all.find(
    (x) =>
      x.fencing.driver === 'none' && x.instances === r.instances && x.latencyMs === r.latencyMs && x.round === r.round,
  );
  if (!base) return undefined;
  return {
    dbGrowthBytes: r.etcd.dbGrowthBytes - base.etcd.dbGrowthBytes,
    receivedBytes: r.etcd.receivedBytes - base.etcd.receivedBytes,
    puts: r.etcd.puts - base.etcd.puts,
    keptBytes: keptBytes(r) - keptBytes(base),
    events: r.events - base.events,
  };
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
  const rows = results.map((r) => {
    const x = extraOverUnfenced(r, results);
    const extra = x
      ? `${signed(mib(x.dbGrowthBytes))} / ${signed(kib(x.receivedBytes))} / ${signed(String(x.puts))} / ${signed(kib(x.keptBytes))} / ${signed(String(x.events))}`
      : '—';
    return `| ${r.instances} | ${(r.latencyMs / 1000).toFixed(1)} | ${r.round} | ${fencingLabel(r.fencing)} | ${(r.measuredMs / 1000).toFixed(1)} | ${r.load1.toFixed(1)} | ${mib(r.etcd.dbGrowthBytes)} | ${kib(r.etcd.receivedBytes)} | ${r.etcd.puts} | ${kib(r.notificationBytes)} | ${r.journalPages ? `${r.journalPages} (${kib(r.journalPageBytes)} KiB)` : '0'} | ${r.events} | ${r.bmcRequests} | ${extra} |`;
  });
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
    '(`etcd_network_client_grpc_received_bytes_total`, i.e. every object version written) and the revisions',
    'written (`etcd_mvcc_put_total`). Everything in the namespace counts (Notification, journal pages, Events,',
    'HaHost flags, leases). "Notification" is the size of the finished Notification object; "journal pages" the',
    'ConfigMaps its status budget moved history into (a status above 32 KiB before a write sheds settled history',
    'into a page of up to 256 KiB, src/engine/status/budget.ts), which is where most of the spread between',
    'otherwise alike runs comes from: whether a run crosses the budget depends on how many servers are in flight',
    'at each write.',
    '',
    'Fencing (`--fencing none,redfish,redfish:N`): *unfenced* is a host without `spec.fencing`; *fenced* gives it',
    "`spec.fencing` on the simulator's fake Redfish BMC (a power-off takes its nova-compute down), with the",
    'credentials Secret and the HaHost patch written before the "before" reading; *N failed power-off(s) first*',
    'has the BMC answer its first N power-offs with HTTP 500, each a failed attempt retried with backoff',
    '(a FencingVerified=False write with a BmcPowerOffTask line, an Event for the first of each reason).',
    'The last column is the fenced row minus the unfenced row of the same size and run: database growth (MiB) /',
    'bytes sent (KiB) / revisions / Notification and its pages (KiB) / Events. Lease renewals during the run count in',
    'both, so a longer recovery writes a little more whatever it does.',
    '',
    '| instances | evacuation latency (s) | run | fencing | recovery (s) | load at end | etcd database growth (MiB) | bytes sent to etcd (KiB) | revisions written | Notification (KiB) | journal pages | Events | BMC requests | extra over unfenced |',
    '|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|',
    ...rows,
    '',
  ].join('\n');
}

const EARLIER = '### Earlier measurements';

/**
 * The generated section followed by the "### Earlier measurements" part of the section it replaces (its
 * heading to the section's end), kept verbatim: the history is written by hand, the table by the benchmark.
 */
export function keepEarlier(generated: string, previous: string | undefined): string {
  const lines = (previous ?? '').split('\n');
  const at = lines.findIndex((l) => l.startsWith(EARLIER));
  const head = generated.trimEnd();
  if (at < 0) return `${head}\n`;
  return `${head}\n\n${lines.slice(at).join('\n').trimEnd()}\n`;
}
