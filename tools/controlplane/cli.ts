// Command line for the local control plane.
//
//   node --import tsx tools/controlplane/cli.ts start [--kubeconfig-out PATH] [--crds DIR | --no-crds] [--keep] [--ha]
//       Starts etcd + kube-apiserver with the CRDs, prints "kubeconfig: PATH" and
//       "server: URL", and runs until SIGINT/SIGTERM, then stops everything.
//       --ha: three etcd members and two kube-apiservers behind a balancer (shape 'ha').
//       --kubeconfig-out also copies the kubeconfig to PATH (e.g. .run/kubeconfig).
//   ... cli.ts binaries   builds (first time) or finds the binaries; prints the bin dir
//   ... cli.ts reap       stops control planes whose owner process is gone
//   ... cli.ts list       lists the running control planes recorded in the state dir
import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ensureBinaries, listRecords, reapOrphans, startControlPlane, stateDir } from './index.ts';

const USAGE = `usage: cli.ts start [--kubeconfig-out PATH] [--crds DIR | --no-crds] [--keep] [--ha]
       cli.ts binaries | reap | list`;

async function start(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      'kubeconfig-out': { type: 'string' },
      crds: { type: 'string' },
      'no-crds': { type: 'boolean' },
      keep: { type: 'boolean' },
      ha: { type: 'boolean' },
    },
  });
  const cp = await startControlPlane({
    crdDir: values['no-crds'] ? null : values.crds ? resolve(values.crds) : undefined,
    keepDir: values.keep,
    shape: values.ha ? 'ha' : 'single',
  });
  let kubeconfig = cp.kubeconfigPath;
  if (values['kubeconfig-out']) {
    kubeconfig = resolve(values['kubeconfig-out']);
    mkdirSync(dirname(kubeconfig), { recursive: true });
    copyFileSync(cp.kubeconfigPath, kubeconfig);
  }
  process.stdout.write(`kubeconfig: ${kubeconfig}\nserver: ${cp.server}\nexport KUBECONFIG=${kubeconfig}\n`);
  // The control plane's processes are unref'd; this timer keeps the CLI alive until a signal.
  const keepAlive = setInterval(() => undefined, 1 << 30);
  await new Promise<void>((done) => {
    const onSignal = (signal: NodeJS.Signals): void => {
      process.stderr.write(`[controlplane] ${signal}: stopping\n`);
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      void cp.stop().then(done, (e: unknown) => {
        process.stderr.write(`[controlplane] stop failed: ${e instanceof Error ? e.message : String(e)}\n`);
        process.exitCode = 1;
        done();
      });
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
  clearInterval(keepAlive);
  process.stderr.write('[controlplane] stopped\n');
}

async function main(): Promise<void> {
  const [command, ...rest] = process.argv.slice(2);
  const log = (line: string) => process.stdout.write(`${line}\n`);
  switch (command) {
    case 'start':
      return start(rest);
    case 'binaries':
      log(await ensureBinaries());
      return;
    case 'reap': {
      const reaped = reapOrphans(log);
      if (!reaped.length) log(`no orphan control planes in ${stateDir()}`);
      return;
    }
    case 'list':
      for (const r of listRecords()) {
        log(
          `${r.id}  owner pid ${r.owner.pid}  ${r.server ?? '(starting)'}  ${r.processes.map((p) => `${p.name}=${p.pid}`).join(' ')}  ${r.dir}`,
        );
      }
      return;
    default:
      process.stderr.write(`${USAGE}\n`);
      process.exitCode = 2;
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
