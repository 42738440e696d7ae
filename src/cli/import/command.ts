// `masakari-operator import --from <masakari URL>`: migration from a running
// Masakari. Reads its segments and hosts (source.ts), lists what the target
// namespace already has, plans create / update / skip per object (plan.ts),
// then prints the plan (--dry-run) or carries it out (execute.ts) and prints
// the results (report.ts). Progress goes to stderr, the report to stdout.
// Exit status: 0 all imported, 1 any object failed or a read failed, 2 usage.
import { pino } from 'pino';
import type { DestinationStream } from 'pino';
import { loadConfig } from '../../config/load.ts';
import { resolveOpenStackCredentials } from '../../config/openstack-auth.ts';
import type { KubeClient } from '../../k8s/client.ts';
import { KubeError } from '../../k8s/client.ts';
import { createKubeClient } from '../../k8s/kube-client.ts';
import { loadKubeConfig } from '../../k8s/kubeconfig.ts';
import { createLogger } from '../../log/logger.ts';
import { createNovaClient, createOpenStackSession } from '../../openstack/index.ts';
import type { NovaClient, OpenStackSession } from '../../openstack/index.ts';
import { StoreImporter, createIdAllocator, listImportTarget } from '../../store/index.ts';
import { operatorVersion } from '../../app/version.ts';
import { DNS_LABEL } from '../../config/option-spec.ts';
import { commandArgs, commandOutput, UsageError } from '../usage.ts';
import { IMPORT_USAGE, parseImportArgs } from './args.ts';
import type { ImportOptions } from './args.ts';
import { executePlan } from './execute.ts';
import { buildPlan } from './plan.ts';
import { TargetMissingError, validatePlan } from './validate.ts';
import { planReport, renderJson, renderTable, resultReport } from './report.ts';
import { masakariEndpoint, MasakariReader, redacted, SourceError } from './source.ts';
import type { SourceAuth } from './source.ts';

export interface ImportIo {
  env?: NodeJS.ProcessEnv;
  stdout?: (text: string) => void;
  stderr?: (text: string) => void;
  /** Where warning logs go (JSON lines); stderr by default. */
  logDestination?: DestinationStream;
}

/** Retries of a failed idempotent request to Masakari or Nova (5xx, timeouts, connection errors). */
const MAX_RETRIES = 3;

/** A problem that ends the whole import (source or cluster unreadable); printed without a stack. */
export class ImportAbort extends Error {}

export async function runImportCommand(argv: string[], io: ImportIo = {}): Promise<number> {
  const env = io.env ?? process.env;
  const output = commandOutput(io);
  const { out, err } = output;
  const opts = commandArgs('import', IMPORT_USAGE, () => parseImportArgs(argv), output);
  if (typeof opts === 'number') return opts;
  try {
    masakariEndpoint(opts.from);
  } catch (e) {
    err(`masakari-operator import: ${(e as Error).message}\n`);
    return 2;
  }
  try {
    return await runImport(opts, env, out, err, io.logDestination);
  } catch (e) {
    if (e instanceof UsageError) {
      err(`masakari-operator import: ${e.message}\n`);
      return 2;
    }
    if (e instanceof SourceError || e instanceof ImportAbort || e instanceof TargetMissingError) {
      err(`masakari-operator import: ${e.message}\n`);
      return 1;
    }
    throw e;
  }
}

async function runImport(
  opts: ImportOptions,
  env: NodeJS.ProcessEnv,
  out: (t: string) => void,
  err: (t: string) => void,
  logDestination: DestinationStream | undefined,
): Promise<number> {
  const { config } = loadConfig({ env, files: opts.configFiles });
  const namespace = opts.namespace ?? config.operator.namespace;
  if (!DNS_LABEL.test(namespace)) {
    throw new UsageError(
      `--namespace must be a Kubernetes namespace name (DNS-1123 label), got ${JSON.stringify(namespace)}`,
    );
  }
  const log = createLogger({
    level: 'warn',
    identity: `import-${process.pid}`,
    version: operatorVersion(),
    destination: logDestination ?? pino.destination(2),
  });

  const creds =
    opts.osToken === undefined || opts.verifyHosts ? resolveOpenStackCredentials(config, { env }) : undefined;
  if (opts.verifyHosts && !creds) {
    throw new UsageError(
      '--verify-hosts needs OpenStack credentials (OS_CLOUD, or OS_AUTH_URL and the other OS_* variables)',
    );
  }
  const settings = { timeoutMs: opts.timeoutMs, maxRetries: MAX_RETRIES, log: log.child({ component: 'openstack' }) };
  let session: OpenStackSession | undefined;
  if (creds) session = createOpenStackSession({ ...creds, insecure: creds.insecure || opts.insecure }, settings);
  const auth: SourceAuth =
    opts.osToken !== undefined
      ? { kind: 'token', token: opts.osToken }
      : session
        ? { kind: 'keystone', session }
        : { kind: 'none' };

  const reader = new MasakariReader({
    url: opts.from,
    microversion: opts.microversion,
    pageSize: opts.pageSize,
    timeoutMs: opts.timeoutMs,
    maxRetries: MAX_RETRIES,
    insecure: opts.insecure,
    cacert: env.OS_CACERT || null,
    auth,
  });
  let kube: (KubeClient & { close(): Promise<void> }) | undefined;
  try {
    err(`reading segments and hosts from ${redacted(reader.endpoint)} (${authText(auth)})\n`);
    const source = await reader.readAll();
    const hostCount = source.segments.reduce((n, s) => n + s.hosts.length, 0);
    err(`read ${source.segments.length} segment(s) and ${hostCount} host(s)\n`);

    try {
      kube = createKubeClient(loadKubeConfig({ env, ...(opts.kubeconfig ? { path: opts.kubeconfig } : {}) }));
    } catch (e) {
      throw new ImportAbort(`kubernetes: cannot load client configuration: ${(e as Error).message}`);
    }
    const target = await kubeRead('list FailoverSegments and HaHosts', () => listImportTarget(kube!, namespace));
    const marks = {
      segments: await kubeRead('read the segment id sequence', () =>
        createIdAllocator(kube!, namespace, 'segments').highWaterMark(),
      ),
      hosts: await kubeRead('read the host id sequence', () =>
        createIdAllocator(kube!, namespace, 'hosts').highWaterMark(),
      ),
    };
    const plan = buildPlan(source, target, marks);

    const importer = new StoreImporter({ kube, namespace, log, importedFrom: source.endpoint });
    const verifyHost =
      opts.verifyHosts && session && creds
        ? novaHostCheck(
            createNovaClient(session, {
              ...settings,
              catalogInfo: config.DEFAULT.nova_catalog_admin_info,
              region: creds.region_name,
              interface: creds.interface,
              microversion: config.operator.nova_api_version,
            }),
          )
        : undefined;
    if (opts.dryRun) {
      err(
        `asking the API server to validate the ${plan.items.filter((i) => i.action === 'create' || i.action === 'update').length} write(s) (server-side dry run)\n`,
      );
      await validatePlan(plan, importer, namespace, verifyHost);
      const report = planReport(plan, source.endpoint, namespace);
      out(opts.output === 'json' ? renderJson(report) : renderTable(report));
      return report.failed > 0 ? 1 : 0;
    }

    let done = 0;
    const writes = plan.items.filter((i) => i.action === 'create' || i.action === 'update').length;
    const results = await executePlan(plan, {
      importer,
      namespace,
      ...(verifyHost ? { verifyHost } : {}),
      onResult: (r) => {
        if (r.outcome !== 'created' && r.outcome !== 'updated' && r.outcome !== 'failed') return;
        done++;
        if (writes > 0 && (done % 50 === 0 || r.outcome === 'failed')) {
          err(`${done}/${writes} written${r.outcome === 'failed' ? ` (${r.item.kind} ${r.item.name}: failed)` : ''}\n`);
        }
      },
    });
    const report = resultReport(results, source.endpoint, namespace);
    out(opts.output === 'json' ? renderJson(report) : renderTable(report));
    return report.failed > 0 ? 1 : 0;
  } finally {
    await reader.close();
    await session?.close();
    await kube?.close();
    log.flush();
  }
}

/** --verify-hosts: Masakari's own rule, a nova-compute service whose host is exactly the name. */
function novaHostCheck(nova: NovaClient): (name: string) => Promise<string | undefined> {
  return async (name) => {
    try {
      const services = await nova.listServices({ binary: 'nova-compute', host: name });
      return services.some((s) => s.host === name)
        ? undefined
        : `Nova has no nova-compute service on host ${JSON.stringify(name)} (--verify-hosts)`;
    } catch (e) {
      return `--verify-hosts: Nova did not answer for ${JSON.stringify(name)}: ${(e as Error).message}`;
    }
  };
}

function authText(auth: SourceAuth): string {
  if (auth.kind === 'token') return 'with the token from --os-token';
  if (auth.kind === 'keystone') return `with a Keystone token for ${auth.session.credentials.auth_url}`;
  return 'without authentication';
}

async function kubeRead<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof KubeError) {
      const hint = e.code === 404 ? ' (are the masakari.openkeel.io CRDs installed? see docs/install.md)' : '';
      throw new ImportAbort(`kubernetes: cannot ${what}: ${e.message}${hint}`);
    }
    throw e;
  }
}
