// The `run` command's arguments (src/main.ts).

/**
 * `run`'s arguments: --config-file FILE or --config-file=FILE, repeatable, as
 * oslo.config takes them (masakari-api --config-file /etc/masakari/masakari.conf).
 */
export function parseRunArgs(args: string[]): { configFiles: string[] } | { error: string } {
  const configFiles: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--config-file') {
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
  return { configFiles };
}
