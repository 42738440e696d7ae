// Runs the Keystone + Nova simulator until SIGINT/SIGTERM and prints the OS_*
// exports for it, e.g.
//   node --import tsx tools/simulator/cli.ts --port 5050 --hosts cpu1,cpu2,cpu3 --server vm1@cpu1:ha
//   eval "$(... | grep ^export)"
// Options:
//   --port N                 listen port on 127.0.0.1 (default 0: a free port)
//   --hosts a,b,c            compute hosts (default cpu1,cpu2,cpu3)
//   --server NAME@HOST[:ha]  a server (repeatable); ':ha' sets metadata HA_Enabled=True
//   --masakari-url URL       instance-ha endpoint in the catalog (default http://127.0.0.1:15868/v1)
//   --admin-password PW      password of user 'admin' (default admin-secret)
//   --evacuate-ms / --stop-ms / --start-ms / --api-ms N   latencies

import { parseArgs } from 'node:util';
import type { SimServerInput } from './records.ts';
import { startSimulator } from './server.ts';

function usage(message: string): never {
  process.stderr.write(`simulator: ${message}\n`);
  process.exit(2);
}

function ms(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0) usage(`--${name} must be a non-negative number of milliseconds`);
  return n;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      port: { type: 'string', default: '0' },
      hosts: { type: 'string', default: 'cpu1,cpu2,cpu3' },
      server: { type: 'string', multiple: true, default: [] },
      'masakari-url': { type: 'string' },
      'admin-password': { type: 'string' },
      'evacuate-ms': { type: 'string' },
      'stop-ms': { type: 'string' },
      'start-ms': { type: 'string' },
      'api-ms': { type: 'string' },
    },
  });
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) usage('--port must be 0..65535');
  const hosts = values.hosts
    .split(',')
    .map((h) => h.trim())
    .filter(Boolean);
  const servers = values.server.map((spec): SimServerInput => {
    const m = /^([^@]+)@([^:]+)(:ha)?$/.exec(spec);
    if (!m) usage(`--server '${spec}' must look like NAME@HOST or NAME@HOST:ha`);
    const metadata: Record<string, string> = m[3] ? { HA_Enabled: 'True' } : {};
    return { name: m[1] as string, host: m[2] as string, metadata };
  });
  const latencyMs = Object.fromEntries(
    (['evacuate', 'stop', 'start', 'api'] as const)
      .map((k) => [k, ms(values[`${k}-ms`], `${k}-ms`)] as const)
      .filter(([, v]) => v !== undefined),
  );
  const sim = await startSimulator({
    port,
    hosts,
    servers,
    latencyMs,
    ...(values['masakari-url'] ? { masakariUrl: values['masakari-url'] } : {}),
    ...(values['admin-password'] ? { adminPassword: values['admin-password'] } : {}),
  });
  for (const [k, v] of Object.entries(sim.credentials)) process.stdout.write(`export ${k}='${v}'\n`);
  process.stdout.write(`# Nova: ${sim.url}/compute/v2.1  control API: ${sim.url}/_sim/state\n`);
  const stop = () => {
    sim.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((err: unknown) => {
  process.stderr.write(`simulator: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
