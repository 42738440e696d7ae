// `make run`: the whole operator on this machine, in the foreground.
//   - a fresh local Kubernetes control plane (etcd + kube-apiserver with the
//     CRDs). An exported KUBECONFIG is ignored: a platform engineer's shell
//     names a real cluster there, and a laptop process must not join it. Only
//     MASAKARI_RUN_KUBECONFIG=<path> (`make run MASAKARI_RUN_KUBECONFIG=…`)
//     uses another cluster, and even then not one where the operator's Leases
//     are held (an installed operator is running there);
//   - the namespace (MASAKARI_NAMESPACE, default masakari);
//   - the OpenStack named by OS_CLOUD / OS_* when given, otherwise the
//     Keystone + Nova simulator (on MASAKARI_SIMULATOR_PORT, default a free
//     port) seeded with three compute hosts and a few servers, some marked
//     HA_Enabled; the operator reaches it through OS_* like any cloud;
//   - the operator itself (dist/src/main.js, built by `make build`) with the
//     API on 127.0.0.1:15868, noauth2 and every component.
// It prints where everything listens, a ready line once /readyz answers 200,
// and on Ctrl-C stops the operator, the simulator and the control plane.
//
// Run with: node --import tsx scripts/run-local.ts (the Makefile does this).

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../src/config/load.ts';
import { resolveOpenStackCredentials } from '../src/config/openstack-auth.ts';
import { startControlPlane, type ControlPlane } from '../tools/controlplane/index.ts';
import { isAlreadyExists, isNotFound, type KubeClient } from '../src/k8s/client.ts';
import { createKubeClient } from '../src/k8s/kube-client.ts';
import { loadKubeConfig } from '../src/k8s/kubeconfig.ts';
import { RESOURCES } from '../src/k8s/resources.ts';
import { ENGINE_LEASE_NAME } from '../src/engine/engine.ts';
import { REMEDIATION_LEASE_NAME } from '../src/model/remediation-constants.ts';
import { STORE_LEASE_NAME } from '../src/reconcilers/component.ts';
import { DETECTION_LEASE_NAME } from '../src/detection/component.ts';
import { startSimulator, type Simulator } from '../tools/simulator/server.ts';
import { freePort } from '../tools/controlplane/ports.ts';
import { CERT_FILE, KEY_FILE } from '../src/webhook/tls.ts';
import { selfSignedKeyPair } from '../src/webhook/self-signed.ts';
import { buildValidatingWebhookConfiguration, registerWebhookConfiguration } from '../src/webhook/configuration.ts';
import { kubeUsername } from '../src/webhook/settings.ts';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const READY_TIMEOUT_MS = 180_000;
const OPERATOR_STOP_GRACE_MS = 30_000;

const say = (line: string) => process.stdout.write(`[make run] ${line}\n`);

/** Three hosts; on each, HA-enabled servers and one without the metadata. */
const SIM_HOSTS = ['compute-0', 'compute-1', 'compute-2'];
const SIM_SERVERS = SIM_HOSTS.flatMap((host, i) => [
  { name: `ha-vm-${i}a`, host, metadata: { HA_Enabled: 'True' } },
  { name: `ha-vm-${i}b`, host, metadata: { HA_Enabled: 'True' } },
  { name: `plain-vm-${i}`, host },
]);

interface Running {
  controlPlane?: ControlPlane;
  simulator?: Simulator;
  operator?: ChildProcess;
  /** Temporary files to remove at the end (the webhook's certificate). */
  tempDirs?: string[];
}

async function ensureNamespace(kube: KubeClient, name: string): Promise<void> {
  try {
    await kube.create(RESOURCES.namespaces, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    say(`created namespace ${name}`);
  } catch (e) {
    if (!isAlreadyExists(e)) throw e;
  }
}

/** The Leases every operator process elects its leaders under (src/runtime/manager.ts). */
const OPERATOR_LEASES = [ENGINE_LEASE_NAME, REMEDIATION_LEASE_NAME, STORE_LEASE_NAME, DETECTION_LEASE_NAME];
/** Clock skew allowed between this machine and whoever renewed a Lease. */
const LEASE_SKEW_MS = 60_000;

interface LeaseObject {
  metadata: { name: string; namespace?: string };
  spec?: { holderIdentity?: string | null; renewTime?: string | null; leaseDurationSeconds?: number };
}

/**
 * "<namespace>/<name> held by <holder>" for each operator Lease that someone
 * holds: a holder is named and its last renewal is not older than the Lease's
 * duration plus clock skew. A released Lease (holder cleared on a graceful
 * stop) or one long expired is not held.
 */
function heldLeases(items: LeaseObject[], nowMs: number): string[] {
  return items
    .filter((l) => OPERATOR_LEASES.includes(l.metadata.name))
    .filter((l) => {
      const holder = l.spec?.holderIdentity;
      if (!holder) return false;
      const renewed = Date.parse(l.spec?.renewTime ?? '');
      if (Number.isNaN(renewed)) return true;
      return nowMs - renewed <= (l.spec?.leaseDurationSeconds ?? 15) * 1000 + LEASE_SKEW_MS;
    })
    .map((l) => `${l.metadata.namespace ?? '?'}/${l.metadata.name} held by ${l.spec!.holderIdentity!}`);
}

/**
 * Refuses a cluster where an operator is running: its Leases are held in any
 * namespace (or, when this kubeconfig may not list Leases cluster-wide, in the
 * namespace make run would use).
 */
async function refuseClusterWithRunningOperator(kube: KubeClient, namespace: string): Promise<void> {
  let items: LeaseObject[];
  try {
    items = (await kube.list<LeaseObject>(RESOURCES.leases, undefined)).items;
  } catch {
    items = [];
    for (const name of OPERATOR_LEASES) {
      try {
        items.push(await kube.get<LeaseObject>(RESOURCES.leases, namespace, name));
      } catch (e) {
        if (!isNotFound(e)) {
          throw new Error(
            `cannot read the Lease ${namespace}/${name} to check that no operator runs there: ${(e as Error).message}`,
            {
              cause: e,
            },
          );
        }
      }
    }
  }
  const held = heldLeases(items, Date.now());
  if (held.length) {
    throw new Error(
      `refusing to use the cluster in MASAKARI_RUN_KUBECONFIG: a masakari-operator is running there (${held.join('; ')}). ` +
        'A second one would process the same notifications against the same OpenStack. ' +
        'Stop that operator first, or run `make run` without MASAKARI_RUN_KUBECONFIG (its own throwaway control plane).',
    );
  }
}

async function checkCrdsInstalled(kube: KubeClient): Promise<void> {
  try {
    await kube.get(RESOURCES.crds, undefined, 'failoversegments.masakari.openkeel.io');
  } catch (e) {
    throw new Error(
      `the cluster in MASAKARI_RUN_KUBECONFIG has no masakari CRDs (${(e as Error).message}); install them with: kubectl apply -f crds/`,
      { cause: e },
    );
  }
}

function operatorCommand(): string[] {
  const built = join(ROOT, 'dist/src/main.js');
  if (existsSync(built)) return [built];
  say('dist/ not built; running the operator from source with tsx');
  return ['--import', 'tsx', join(ROOT, 'src/main.ts')];
}

async function waitReady(metricsUrl: string, operator: ChildProcess): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let last = '';
  while (Date.now() < deadline) {
    if (operator.exitCode !== null || operator.signalCode !== null) {
      throw new Error(`the operator exited before it became ready (${operator.exitCode ?? operator.signalCode})`);
    }
    try {
      const res = await fetch(`${metricsUrl}/readyz`, { signal: AbortSignal.timeout(2_000) });
      if (res.status === 200) return;
      last = await res.text();
    } catch (e) {
      last = (e as Error).message;
    }
    await sleep(500);
  }
  throw new Error(`the operator was not ready after ${READY_TIMEOUT_MS / 1000} s; last /readyz: ${last}`);
}

function stopOperator(operator: ChildProcess): Promise<void> {
  if (operator.exitCode !== null || operator.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = setTimeout(() => {
      say(`operator still running after ${OPERATOR_STOP_GRACE_MS / 1000} s; killing it`);
      operator.kill('SIGKILL');
    }, OPERATOR_STOP_GRACE_MS);
    operator.once('exit', (code, signal) => {
      clearTimeout(kill);
      say(`operator stopped (${signal ?? `exit code ${code}`})`);
      resolve();
    });
    operator.kill('SIGTERM');
  });
}

async function stopAll(running: Running): Promise<void> {
  if (running.operator) await stopOperator(running.operator);
  if (running.simulator) {
    await running.simulator.stop();
    say('simulator stopped');
  }
  if (running.controlPlane) {
    await running.controlPlane.stop();
    say('control plane stopped');
  }
  for (const dir of running.tempDirs ?? []) rmSync(dir, { recursive: true, force: true });
}

async function main(): Promise<number> {
  const env = { ...process.env };
  const running: Running = {};
  let stopping: Promise<void> | undefined;
  const stop = () => (stopping ??= stopAll(running));

  // The operator runs in its own process group (detached) so the terminal's
  // Ctrl-C reaches only this script, which then sends exactly one SIGTERM:
  // a second signal would make the operator skip its graceful stop.
  let interrupted = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (interrupted) {
      say(`second ${signal}: killing the operator`);
      running.operator?.kill('SIGKILL');
      return;
    }
    interrupted = true;
    say(`${signal}: stopping`);
    void stop();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.on('exit', () => running.operator?.kill('SIGKILL'));

  try {
    // Fail on a bad MASAKARI_* or OS_* setting before starting anything.
    const { config } = loadConfig({ env });
    const namespace = config.operator.namespace;
    const creds = resolveOpenStackCredentials(config, { env });

    let kubeconfigPath = env.MASAKARI_RUN_KUBECONFIG;
    if (kubeconfigPath) {
      say(`using the cluster in MASAKARI_RUN_KUBECONFIG=${kubeconfigPath}`);
    } else {
      if (env.KUBECONFIG) {
        say(
          `ignoring KUBECONFIG=${env.KUBECONFIG}: make run uses its own throwaway control plane; ` +
            'to run against that cluster, say so: make run MASAKARI_RUN_KUBECONFIG="$KUBECONFIG"',
        );
      }
      say('starting a local control plane (etcd + kube-apiserver)...');
      running.controlPlane = await startControlPlane({ log: (line) => say(`controlplane: ${line}`) });
      kubeconfigPath = running.controlPlane.kubeconfigPath;
    }
    if (interrupted) return 0;
    const kube = createKubeClient(loadKubeConfig({ env: { ...env, KUBECONFIG: kubeconfigPath } }));
    // Who the operator is to the API server: it uses this same kubeconfig.
    let operatorUser: string | undefined;
    try {
      if (!running.controlPlane) {
        await refuseClusterWithRunningOperator(kube, namespace);
        await checkCrdsInstalled(kube);
      }
      await ensureNamespace(kube, namespace);
      if (running.controlPlane) operatorUser = await kubeUsername(kube);
    } finally {
      await kube.close();
    }

    const operatorEnv: NodeJS.ProcessEnv = {
      ...env,
      KUBECONFIG: kubeconfigPath,
      MASAKARI_LISTEN: env.MASAKARI_LISTEN ?? '127.0.0.1:15868',
      MASAKARI_METRICS_LISTEN: env.MASAKARI_METRICS_LISTEN ?? '127.0.0.1:8081',
      MASAKARI_AUTH_STRATEGY: env.MASAKARI_AUTH_STRATEGY ?? 'noauth2',
      MASAKARI_COMPONENTS: env.MASAKARI_COMPONENTS ?? 'api,engine,remediation,detection',
    };
    const apiUrl = `http://${operatorEnv.MASAKARI_LISTEN}/v1`;
    // On our own throwaway control plane, also run the validating admission
    // webhook, so kubectl writes obey the same rules as REST ones. Never
    // registered in a cluster named by MASAKARI_RUN_KUBECONFIG: that is not ours to change.
    let webhook: { url: string; caPem: string; certDir: string } | undefined;
    if (running.controlPlane && operatorEnv.MASAKARI_COMPONENTS?.split(',').includes('api')) {
      const pair = await selfSignedKeyPair();
      const certDir = mkdtempSync(join(tmpdir(), 'masakari-webhook-'));
      writeFileSync(join(certDir, CERT_FILE), pair.cert);
      writeFileSync(join(certDir, KEY_FILE), pair.key, { mode: 0o600 });
      const listen = env.MASAKARI_WEBHOOK_LISTEN ?? `127.0.0.1:${await freePort()}`;
      operatorEnv.MASAKARI_WEBHOOK_LISTEN = listen;
      operatorEnv.MASAKARI_WEBHOOK_CERT_DIR = certDir;
      // The operator authenticates as the control plane's admin, not as a
      // service account: name it, or the webhook would re-check the
      // operator's own writes. Its field manager still has to match, so plain
      // kubectl writes with this kubeconfig (same admin) stay checked.
      operatorEnv.MASAKARI_WEBHOOK_OPERATOR_USERS = [env.MASAKARI_WEBHOOK_OPERATOR_USERS, operatorUser]
        .filter((names) => names?.trim())
        .join(',');
      webhook = { url: `https://${listen}/validate`, caPem: pair.caPem, certDir };
      (running.tempDirs ??= []).push(certDir);
    }
    if (creds) {
      say(`using the OpenStack of ${creds.source} (${creds.auth_url}); no simulator`);
    } else {
      const port = Number(env.MASAKARI_SIMULATOR_PORT ?? 0);
      if (!Number.isInteger(port) || port < 0 || port > 65535) {
        throw new Error(
          `MASAKARI_SIMULATOR_PORT must be a port number, got ${JSON.stringify(env.MASAKARI_SIMULATOR_PORT)}`,
        );
      }
      running.simulator = await startSimulator({
        port,
        hosts: SIM_HOSTS,
        servers: SIM_SERVERS,
        latencyMs: { evacuate: 2_000, stop: 1_000, start: 1_000, api: 20 },
        masakariUrl: apiUrl,
      });
      Object.assign(operatorEnv, running.simulator.credentials);
      say(`no OpenStack credentials given: started the Keystone + Nova simulator at ${running.simulator.url}`);
    }
    if (interrupted) return 0;

    const [first, ...rest] = operatorCommand();
    running.operator = spawn(process.execPath, [first!, ...rest], {
      cwd: ROOT,
      env: operatorEnv,
      stdio: ['ignore', 'inherit', 'inherit'],
      detached: true,
    });
    const exited = new Promise<number>((resolve) =>
      running.operator!.once('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0))),
    );
    const metricsUrl = `http://${operatorEnv.MASAKARI_METRICS_LISTEN}`;
    await waitReady(metricsUrl, running.operator);
    if (webhook) {
      const admin = createKubeClient(loadKubeConfig({ env: { ...env, KUBECONFIG: kubeconfigPath } }));
      try {
        await registerWebhookConfiguration(
          admin,
          buildValidatingWebhookConfiguration({
            name: 'masakari-operator-local',
            namespace,
            clientConfig: { url: webhook.url },
            caPem: webhook.caPem,
          }),
        );
      } finally {
        await admin.close();
      }
    }

    const sim = running.simulator;
    const noauth = operatorEnv.MASAKARI_AUTH_STRATEGY === 'noauth2';
    const auth = noauth ? 'noauth2: every caller is admin' : 'keystone: send X-Auth-Token with a Keystone token';
    const lines = [
      '',
      'masakari-operator is ready',
      `  Masakari API    ${apiUrl}   (${auth})`,
      `  health/metrics  ${metricsUrl}/healthz  ${metricsUrl}/readyz  ${metricsUrl}/metrics`,
      `  kubeconfig      ${kubeconfigPath}`,
      `                  KUBECONFIG=${kubeconfigPath} kubectl -n ${namespace} get failoversegments,hahosts,notifications`,
      ...(webhook ? [`  webhook         ${webhook.url}   (kubectl writes are checked by the same rules as REST)`] : []),
      ...(sim
        ? [
            `  simulator       ${sim.url}   (Keystone ${sim.authUrl}, Nova ${sim.url}/compute/v2.1, control ${sim.url}/_sim)`,
            // Every OS_* value, ready to paste into a shell for the openstack CLI.
            `  credentials     export ${Object.entries(sim.credentials)
              .map(([k, v]) => `${k}=${v}`)
              .join(' ')}`,
            `  compute hosts   ${SIM_HOSTS.join(', ')}`,
          ]
        : []),
      '',
      noauth
        ? `  try: curl -s -H 'X-Auth-Token: admin:admin' ${apiUrl}/segments`
        : `  try: curl -s -H "X-Auth-Token: $(openstack token issue -f value -c id)" ${apiUrl}/segments`,
      'Press Ctrl-C to stop.',
      '',
    ];
    for (const line of lines) say(line);

    const code = await exited;
    if (!interrupted) say(`the operator exited with code ${code}`);
    await stop();
    return interrupted ? 0 : code;
  } catch (e) {
    // After Ctrl-C, a start-up step failing because things are being stopped is expected.
    if (!interrupted) say(`error: ${(e as Error).message}`);
    await stop();
    return interrupted ? 0 : 1;
  }
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`[make run] ${(e as Error)?.stack ?? String(e)}\n`);
    process.exit(1);
  },
);
