// What the `import` and `purge` commands share: where they write, the error
// of a bad command line, and how a command line ends the command before it
// starts (exit status 2 with the usage; --help prints the usage, status 0).

/** A bad command line: printed with the command's usage, exit status 2. */
export class UsageError extends Error {}

export interface CommandOutput {
  /** The command's report (stdout by default). */
  out(text: string): void;
  /** Progress and errors (stderr by default). */
  err(text: string): void;
}

export function commandOutput(io: { stdout?: (text: string) => void; stderr?: (text: string) => void }): CommandOutput {
  return {
    out: io.stdout ?? ((t: string) => void process.stdout.write(t)),
    err: io.stderr ?? ((t: string) => void process.stderr.write(t)),
  };
}

/**
 * The arguments `parse` reads, or the exit status when the command ends
 * here: 2 after a UsageError (said with the usage), 0 after printing the
 * usage for --help.
 */
export function commandArgs<A extends { help: boolean }>(
  command: string,
  usage: string,
  parse: () => A,
  output: CommandOutput,
): A | number {
  let args: A;
  try {
    args = parse();
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    output.err(`masakari-operator ${command}: ${e.message}\n\n${usage}`);
    return 2;
  }
  if (args.help) {
    output.out(usage);
    return 0;
  }
  return args;
}
