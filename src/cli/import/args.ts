// Command line of `masakari-operator import`. Parsing only: every mistake is
// a UsageError naming the option, which the command prints with the usage
// text and exit status 2.
import { parseArgs } from 'node:util';
import { UsageError } from '../usage.ts';

export const IMPORT_USAGE = `usage: masakari-operator import --from <masakari URL> [options]

Copies every failover segment and host of a running Masakari into
FailoverSegment and HaHost resources, keeping their uuids (and their integer
ids where the namespace has not used them). Safe to run again: objects that
match are skipped, changed ones are updated, nothing is duplicated.
Notifications are not imported. See docs/migration.md.

options:
  --from URL          Masakari API, e.g. http://masakari:15868 or .../v1 (required)
  --namespace NS      target namespace (default: [operator] namespace / MASAKARI_NAMESPACE)
  --config-file FILE  a masakari.conf (or YAML) read as \`run --config-file\` reads it, after
                      MASAKARI_CONFIG; repeatable, later files override. Its [operator]
                      namespace and OpenStack credentials apply here
  --dry-run           print the plan (create / update / skip per object), write nothing
  --os-token TOKEN    Keystone token to send to Masakari (default: log in with OS_CLOUD /
                      OS_* credentials if set, else no authentication, for noauth2)
  --insecure          do not verify the Masakari (and Keystone) TLS certificates
  --microversion V    instance-ha microversion to read with: 1.2 or 1.3 (default 1.3)
  --verify-hosts      check that Nova has a nova-compute service for every host written
                      (needs OS_* credentials; Masakari already checked them once)
  --page-size N       items per Masakari list request, 1..1000 (default 500)
  --timeout SECONDS   per request to Masakari (default 30)
  --output FORMAT     table (default) or json
  --kubeconfig PATH   kubeconfig file (default: KUBECONFIG, in-cluster, ~/.kube/config)
  -h, --help          show this text

Exit status: 0 when every object is imported (or, with --dry-run, would be),
1 when any object failed or the source or cluster could not be read, 2 for
a usage error.
`;

export type Microversion = '1.2' | '1.3';

export interface ImportOptions {
  from: string;
  namespace?: string;
  dryRun: boolean;
  osToken?: string;
  insecure: boolean;
  microversion: Microversion;
  verifyHosts: boolean;
  pageSize: number;
  timeoutMs: number;
  output: 'table' | 'json';
  kubeconfig?: string;
  configFiles: string[];
  help: boolean;
}

const MICROVERSIONS: readonly string[] = ['1.2', '1.3'];
/** Masakari's default [DEFAULT] osapi_max_limit; a larger limit is silently lowered by the server anyway. */
const MAX_PAGE_SIZE = 1000;

function integerIn(option: string, value: string | undefined, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (!/^[0-9]+$/.test(value) || Number(value) < min || Number(value) > max) {
    throw new UsageError(`${option} must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`);
  }
  return Number(value);
}

export function parseImportArgs(argv: string[]): ImportOptions {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        from: { type: 'string' },
        namespace: { type: 'string', short: 'n' },
        'dry-run': { type: 'boolean', default: false },
        'os-token': { type: 'string' },
        insecure: { type: 'boolean', default: false },
        microversion: { type: 'string' },
        'verify-hosts': { type: 'boolean', default: false },
        'page-size': { type: 'string' },
        timeout: { type: 'string' },
        output: { type: 'string', short: 'o' },
        kubeconfig: { type: 'string' },
        'config-file': { type: 'string', multiple: true },
        help: { type: 'boolean', short: 'h', default: false },
      },
    }));
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const help = values.help === true;
  if (!help && !values.from) throw new UsageError('--from <masakari URL> is required');
  const microversion = values.microversion ?? '1.3';
  if (!MICROVERSIONS.includes(microversion)) {
    throw new UsageError(
      `--microversion must be 1.2 or 1.3 (segments carry "enabled" from 1.2 on), got ${JSON.stringify(microversion)}`,
    );
  }
  const output = values.output ?? 'table';
  if (output !== 'table' && output !== 'json') {
    throw new UsageError(`--output must be table or json, got ${JSON.stringify(output)}`);
  }
  const configFiles = values['config-file'] ?? [];
  if (configFiles.includes('')) throw new UsageError('--config-file needs a file name');
  if (values['os-token'] !== undefined && values['os-token'].trim() === '') {
    throw new UsageError('--os-token must not be empty');
  }
  return {
    from: values.from ?? '',
    ...(values.namespace !== undefined ? { namespace: values.namespace } : {}),
    dryRun: values['dry-run'] === true,
    ...(values['os-token'] !== undefined ? { osToken: values['os-token'] } : {}),
    insecure: values.insecure === true,
    microversion: microversion as Microversion,
    verifyHosts: values['verify-hosts'] === true,
    pageSize: integerIn('--page-size', values['page-size'], 500, 1, MAX_PAGE_SIZE),
    timeoutMs: integerIn('--timeout', values.timeout, 30, 1, 3600) * 1000,
    output,
    ...(values.kubeconfig !== undefined ? { kubeconfig: values.kubeconfig } : {}),
    configFiles,
    help,
  };
}
