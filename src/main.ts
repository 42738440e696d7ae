#!/usr/bin/env node
// masakari-operator: the one entry point.
//   masakari-operator [run] [--config-file FILE]... [--debug]
//                               start the components named by MASAKARI_COMPONENTS
//   masakari-operator import    copy segments and hosts from a running Masakari (src/cli/import/)
//   masakari-operator purge     delete notifications that ended long ago (src/cli/purge/)
//   masakari-operator help      usage
//   masakari-operator version   print the version
// In the image: node dist/src/main.js; in development: node --import tsx src/main.ts.
//
// Signals: the first SIGTERM or SIGINT stops gracefully (see src/app/run.ts);
// a second one exits at once with 128 + the signal number. SIGHUP (Masakari's
// reload signal) does not end the process: the configuration is read at start.

import { constants } from 'node:os';
import { parseRunArgs } from './config/args.ts';
import { ConfigError } from './config/load.ts';
import { OpenStackAuthError } from './config/openstack-auth.ts';
import { StartupError } from './app/components.ts';
import { operatorVersion } from './app/version.ts';

const USAGE = `usage: masakari-operator [command]

commands:
  run       start the components named by MASAKARI_COMPONENTS (default);
            --config-file FILE (repeatable, later files override) reads a
            masakari.conf (oslo.config INI) or a YAML file of its groups;
            --debug (-d) sets [DEFAULT] debug, as for masakari-api
  import    copy segments and hosts from a running Masakari (import --help)
  purge     delete notifications that ended more than N days ago (purge --help)
  help      show this text
  version   print the version

Configuration: --config-file, MASAKARI_CONFIG (read first), MASAKARI_* variables and OS_* /
OS_CLOUD for OpenStack credentials; see docs/configuration.md.
`;

type Command = (args: string[]) => Promise<number>;

function shutdownRequested(): Promise<string> {
  return new Promise((resolve) => {
    let received = false;
    const onSignal = (signal: NodeJS.Signals) => {
      if (received) {
        process.stderr.write(`masakari-operator: second ${signal}, exiting now\n`);
        process.exit(128 + constants.signals[signal]);
      }
      received = true;
      resolve(signal);
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
}

/**
 * masakari-engine re-reads its mutable options on SIGHUP; Node's default for
 * SIGHUP is to exit. Keep running and say how to apply a change instead.
 */
function explainReloadSignal(): void {
  process.on('SIGHUP', () => {
    process.stderr.write(
      'masakari-operator: SIGHUP ignored: the configuration is read only at start; restart the process (kubectl rollout restart) to apply a change\n',
    );
  });
}

const COMMANDS: Record<string, Command> = {
  run: async (args) => {
    const parsed = parseRunArgs(args);
    if ('error' in parsed) {
      process.stderr.write(`masakari-operator: ${parsed.error}\n\n${USAGE}`);
      return 2;
    }
    const { runOperator } = await import('./app/run.ts');
    explainReloadSignal();
    return runOperator({
      shutdownRequested: shutdownRequested(),
      configFiles: parsed.configFiles,
      debug: parsed.debug,
    });
  },
  import: async (args) => {
    const { runImportCommand } = await import('./cli/import/command.ts');
    return runImportCommand(args);
  },
  purge: async (args) => {
    const { runPurgeCommand } = await import('./cli/purge/command.ts');
    return runPurgeCommand(args);
  },
  help: async () => {
    process.stdout.write(USAGE);
    return 0;
  },
  version: async () => {
    process.stdout.write(`${operatorVersion()}\n`);
    return 0;
  },
};

/** Errors whose message says everything an operator needs; no stack trace. */
function isExpected(e: unknown): e is Error {
  return e instanceof ConfigError || e instanceof OpenStackAuthError || e instanceof StartupError;
}

async function main(argv: string[]): Promise<number> {
  // `masakari-operator --config-file X [--debug]` runs, as masakari-api --config-file X does.
  const runsByDefault = argv[0]?.startsWith('--config-file') || argv[0] === '--debug' || argv[0] === '-d';
  const [name = 'run', ...rest] = runsByDefault ? ['run', ...argv] : argv;
  const command =
    name === '--help' || name === '-h' ? COMMANDS.help : name === '--version' ? COMMANDS.version : COMMANDS[name];
  if (!command) {
    process.stderr.write(`masakari-operator: unknown command ${JSON.stringify(name)}\n\n${USAGE}`);
    return 2;
  }
  return command(rest);
}

process.on('unhandledRejection', (reason) => {
  process.stderr.write(
    `masakari-operator: unhandled promise rejection: ${(reason as Error)?.stack ?? String(reason)}\n`,
  );
  process.exit(1);
});

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`masakari-operator: ${isExpected(e) ? e.message : ((e as Error)?.stack ?? String(e))}\n`);
    process.exit(1);
  },
);
