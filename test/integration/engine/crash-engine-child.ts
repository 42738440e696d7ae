// An engine component in its own process, for the crash and leader tests
// (started through engine-process.ts): the parent SIGKILLs it at chosen points
// and starts another. Configuration comes from the environment exactly as in
// production (OS_* for Nova, a kubeconfig, MASAKARI__OPERATOR__* for the
// leader-election timings), with the test timings of support.ts otherwise. It
// exits when its stdin closes, so a crashed test run never leaves it behind.
//   CRASH_KUBECONFIG  kubeconfig of the test control plane
//   CRASH_NAMESPACE   namespace holding the custom resources
//   CRASH_IDENTITY    leader-election identity (a restarted pod keeps its name)
//   OS_*              simulator credentials
//   MASAKARI__OPERATOR__LEASE_DURATION / __RENEW_DEADLINE / __RETRY_PERIOD  optional
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { loadConfig } from '../../../src/config/load.ts';
import { resolveOpenStackCredentials } from '../../../src/config/openstack-auth.ts';
import { createComponent } from '../../../src/engine/component.ts';
import { createKubeClient } from '../../../src/k8s/kube-client.ts';
import { loadKubeConfig } from '../../../src/k8s/kubeconfig.ts';
import { createNovaClient } from '../../../src/openstack/index.ts';
import { fastConfig } from './support.ts';
import { startComponent } from '../../../src/testing/component.ts';

const env = process.env;
const LEASE_OPTIONS = ['lease_duration', 'renew_deadline', 'retry_period'] as const;
const config = fastConfig((c) => {
  c.DEFAULT.host_failure_recovery_threads = 3;
  // Parsed and cross-checked by the production loader; unset ones keep support.ts's values.
  const leaseEnv: NodeJS.ProcessEnv = {};
  for (const option of LEASE_OPTIONS) {
    const name = `MASAKARI__OPERATOR__${option.toUpperCase()}`;
    leaseEnv[name] = env[name] ?? String(c.operator[option]);
  }
  const lease = loadConfig({ env: leaseEnv }).config.operator;
  for (const option of LEASE_OPTIONS) c.operator[option] = lease[option];
});
const creds = resolveOpenStackCredentials(config, { env });
if (!creds) throw new Error('crash child: OS_* credentials missing');
const kube = createKubeClient(loadKubeConfig({ path: env.CRASH_KUBECONFIG ?? '', env: {} }));
const stopping = new AbortController();
const component = await startComponent(
  {
    config,
    namespace: env.CRASH_NAMESPACE ?? '',
    kube,
    nova: createNovaClient(creds, { timeoutMs: 5_000, maxRetries: 1 }),
    log: pino({ level: env.MASAKARI_TEST_LOG ?? 'warn' }),
    metrics: new Registry(),
    identity: env.CRASH_IDENTITY ?? `crash-${process.pid}`,
    signal: stopping.signal,
  },
  createComponent,
);

const ready = setInterval(() => {
  if (!component.ready()) return;
  clearInterval(ready);
  process.stdout.write('ready\n');
}, 20);

const shutdown = async (): Promise<void> => {
  stopping.abort();
  await component.stop();
  await kube.close();
  process.exit(0);
};
process.stdin.on('end', () => void shutdown());
process.stdin.resume();
process.on('SIGTERM', () => void shutdown());
