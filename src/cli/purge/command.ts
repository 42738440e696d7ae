// `masakari-operator purge --age-in-days N [--dry-run]`: on demand, what the
// retention task does periodically (src/store/retention.ts), the counterpart
// of `masakari-manage db purge --age_in_days N [--max_rows M]`
// (masakari/cmd/manage.py DbCommands.purge). Same options and limits:
// --age-in-days defaults to 30, must be >= 0 and less than the days since the
// epoch; --max-rows defaults to -1 (no limit) and must not be 0. Masakari's
// underscore spellings are accepted too. Deletes notifications that ended
// (finished, failed, ignored) more than N days ago, with their vmoves.
// Prints one summary line on stdout. Exit status: 0 done, 1 the cluster could
// not be read or written, 2 usage.
import { parseArgs } from 'node:util';
import { loadConfig } from '../../config/load.ts';
import type { KubeClient } from '../../k8s/client.ts';
import { KubeError } from '../../k8s/client.ts';
import { createKubeClient } from '../../k8s/kube-client.ts';
import { loadKubeConfig } from '../../k8s/kubeconfig.ts';
import type { PurgeResult } from '../../store/index.ts';
import { purgeNotifications } from '../../store/index.ts';
import { FINISHED_PHASES } from '../../model/notification-phase.ts';
import { systemClock } from '../../time/clock.ts';
import { DNS_LABEL } from '../../config/option-spec.ts';
import { commandArgs, commandOutput, UsageError } from '../usage.ts';

export const PURGE_USAGE = `usage: masakari-operator purge [--age-in-days N] [--max-rows M] [--dry-run]

Deletes notifications that ended (finished, failed or ignored) more than N
days ago, with their vmoves, as \`masakari-manage db purge --age_in_days N\`
purges old rows. Notifications that are new, running or in error are never
deleted. The operator does this by itself after [operator]
notification_retention_days (default 30); see docs/operations.md.

options:
  --age-in-days N     purge notifications that ended more than N days ago (default 30)
  --max-rows M        delete at most M notifications (default -1: no limit)
  --dry-run           count what would be deleted, delete nothing
  --namespace NS      namespace (default: [operator] namespace / MASAKARI_NAMESPACE)
  --config-file FILE  a masakari.conf (or YAML) read as \`run --config-file\` reads it, after
                      MASAKARI_CONFIG; repeatable, later files override
  --kubeconfig PATH   kubeconfig file (default: KUBECONFIG, in-cluster, ~/.kube/config)
  -h, --help          show this text

Exit status: 0 done, 1 the cluster could not be read or written, 2 usage error.
`;

export interface PurgeArgs {
  ageInDays: number;
  maxRows: number;
  dryRun: boolean;
  namespace?: string;
  kubeconfig?: string;
  configFiles: string[];
  help: boolean;
}

function integerOption(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!/^-?[0-9]+$/.test(value)) throw new UsageError(`--${name} must be an integer, got ${JSON.stringify(value)}`);
  return Number(value);
}

export function parsePurgeArgs(argv: string[], now: Date = systemClock.now()): PurgeArgs {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        'age-in-days': { type: 'string' },
        age_in_days: { type: 'string' },
        'max-rows': { type: 'string' },
        max_rows: { type: 'string' },
        'dry-run': { type: 'boolean', default: false },
        namespace: { type: 'string' },
        kubeconfig: { type: 'string' },
        'config-file': { type: 'string', multiple: true },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const configFiles = values['config-file'] ?? [];
  if (configFiles.includes('')) throw new UsageError('--config-file needs a file name');
  const ageInDays = integerOption('age-in-days', values['age-in-days'] ?? values.age_in_days, 30);
  const maxRows = integerOption('max-rows', values['max-rows'] ?? values.max_rows, -1);
  // masakari/cmd/manage.py's checks, with its messages.
  if (maxRows === 0 || maxRows < -1) throw new UsageError('Must supply value greater than 0 for max_rows.');
  if (ageInDays < 0) throw new UsageError('Must supply a non-negative value for age.');
  if (ageInDays >= now.getTime() / 86_400_000) throw new UsageError('Maximal age is count of days since epoch.');
  return {
    ageInDays,
    maxRows,
    dryRun: values['dry-run'] === true,
    namespace: values.namespace,
    kubeconfig: values.kubeconfig,
    configFiles,
    help: values.help === true,
  };
}

/** The summary line, e.g. "Deleted 12 notifications older than 30 days (finished: 10, failed: 2, ignored: 0)". */
export function purgeSummary(result: PurgeResult, args: Pick<PurgeArgs, 'ageInDays' | 'dryRun'>): string {
  const byPhase = FINISHED_PHASES.map((p) => `${p}: ${result.matched[p] ?? 0}`).join(', ');
  const matched = Object.values(result.matched).reduce((a, b) => a + b, 0);
  const count = args.dryRun ? matched : result.deleted;
  const verb = args.dryRun ? 'Would delete' : 'Deleted';
  return `${verb} ${count} notification${count === 1 ? '' : 's'} that ended more than ${args.ageInDays} day${
    args.ageInDays === 1 ? '' : 's'
  } ago (${byPhase}; ${result.examined} examined)\n`;
}

export interface PurgeIo {
  env?: NodeJS.ProcessEnv;
  stdout?: (text: string) => void;
  stderr?: (text: string) => void;
  now?: () => Date;
  /** Injected in tests; default: from the kubeconfig. */
  kube?: KubeClient;
}

export async function runPurgeCommand(argv: string[], io: PurgeIo = {}): Promise<number> {
  const env = io.env ?? process.env;
  const output = commandOutput(io);
  const { out, err } = output;
  const now = (io.now ?? (() => systemClock.now()))();
  const args = commandArgs('purge', PURGE_USAGE, () => parsePurgeArgs(argv, now), output);
  if (typeof args === 'number') return args;
  const { config } = loadConfig({ env, files: args.configFiles });
  const namespace = args.namespace ?? config.operator.namespace;
  if (!DNS_LABEL.test(namespace)) {
    err(`masakari-operator purge: --namespace must be a Kubernetes namespace name, got ${JSON.stringify(namespace)}\n`);
    return 2;
  }
  let kube = io.kube;
  let owned: (KubeClient & { close(): Promise<void> }) | undefined;
  try {
    if (!kube) {
      try {
        owned = createKubeClient(loadKubeConfig({ env, ...(args.kubeconfig ? { path: args.kubeconfig } : {}) }));
      } catch (e) {
        err(`masakari-operator purge: kubernetes: cannot load client configuration: ${(e as Error).message}\n`);
        return 1;
      }
      kube = owned;
    }
    const result = await purgeNotifications({
      kube,
      namespace,
      ageInDays: args.ageInDays,
      now,
      dryRun: args.dryRun,
      maxRows: args.maxRows,
    });
    out(purgeSummary(result, args));
    return 0;
  } catch (e) {
    if (e instanceof KubeError) {
      err(`masakari-operator purge: kubernetes: ${e.message}\n`);
      return 1;
    }
    throw e;
  } finally {
    await owned?.close();
  }
}
