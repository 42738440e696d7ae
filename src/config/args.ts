// The `run` command's arguments (src/main.ts).

/**
 * `run`'s arguments: --config-file FILE or --config-file=FILE, repeatable, as
 * oslo.config takes them (masakari-api --config-file /etc/masakari/masakari.conf),
 * and oslo.log's --debug / -d, which devstack's plugin.sh passes to masakari-api.
 */
export function parseRunArgs(args: string[]): { configFiles: string[]; debug: boolean } | { error: string } {
  const configFiles: string[] = [];
  let debug = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--debug' || arg === '-d') {
      debug = true;
    } else if (arg === '--config-file') {
      const value = args[++i];
      if (value === undefined || value === '') return { error: '--config-file needs a file name' };
      configFiles.push(value);
    } else if (arg.startsWith('--config-file=')) {
      const value = arg.slice('--config-file='.length);
      if (value === '') return { error: '--config-file needs a file name' };
      configFiles.push(value);
    } else {
      return { error: `run: unknown argument ${JSON.stringify(arg)}` };
    }
  }
  return { configFiles, debug };
}
