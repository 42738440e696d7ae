// `make openstack`: the mini OpenStack in the foreground.
//
//   node --import tsx tools/openstack-cloud/cli.ts [--masakari-url URL] [--no-servers]
//
// Starts RabbitMQ, Keystone, Placement, Nova (3 fake computes) and our
// Glance/Neutron stand-ins, registers the instance-ha endpoint (default
// http://127.0.0.1:15868/v1, where `make run` listens), boots a few servers
// (HA_Enabled on cpu1 and cpu2, one without the metadata), prints the
// `export OS_…` lines for the admin, and runs until SIGINT/SIGTERM.
import { parseArgs } from 'node:util';
import { startOpenStackCloud } from './cloud.ts';
import { startCloudControl } from './control.ts';
import { bootServer, ensureFlavor, waitServers } from './servers.ts';

const say = (line: string) => process.stderr.write(`[make openstack] ${line}\n`);

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { 'masakari-url': { type: 'string' }, 'no-servers': { type: 'boolean' } },
  });
  const masakariUrl = values['masakari-url'] ?? 'http://127.0.0.1:15868/v1';
  const cloud = await startOpenStackCloud({ log: (l) => say(l) });
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    say(`${signal}: stopping`);
    await control.close();
    await cloud.stop();
    say('stopped');
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  const control = await startCloudControl(cloud);
  await cloud.setMasakariEndpoint(masakariUrl);
  if (!values['no-servers']) {
    const nova = cloud.keystone.nova;
    const flavor = await ensureFlavor(nova);
    const wanted = [
      { name: 'ha-vm-1a', host: 'cpu1' },
      { name: 'ha-vm-1b', host: 'cpu1' },
      { name: 'plain-vm-1', host: 'cpu1', haEnabled: false },
      { name: 'ha-vm-2a', host: 'cpu2' },
    ].filter((s) => cloud.computes.includes(s.host));
    const ids = await Promise.all(wanted.map((s) => bootServer(nova, flavor, s)));
    await waitServers(nova, ids, 'ACTIVE');
    say(`booted ${wanted.map((s) => `${s.name}@${s.host}`).join(', ')}`);
  }
  const lines = Object.entries(cloud.adminEnv).map(([k, v]) => `export ${k}=${v}`);
  process.stdout.write(
    [
      '# the mini OpenStack is up; in another shell:',
      ...lines,
      `# instance-ha endpoint in the catalog: ${masakariUrl} (start the operator there: make run)`,
      `# Nova (through the recording proxy): ${cloud.novaUrl}`,
      `# control API (kill/start computes): ${control.url}  e.g. curl -X POST ${control.url}/computes/cpu1/kill`,
      `# logs: ${cloud.dir}/log; Ctrl-C stops everything`,
      '',
    ].join('\n'),
  );
  // the cloud's processes are unref'd; this keeps the CLI alive until a signal
  setInterval(() => undefined, 1 << 30);
}

main().catch((e: unknown) => {
  say(e instanceof Error ? `${e.stack ?? e.message}${e.cause ? `\ncause: ${String(e.cause)}` : ''}` : String(e));
  process.exit(1);
});
