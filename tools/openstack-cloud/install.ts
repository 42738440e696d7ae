// What the mini OpenStack needs installed: the pinned venv of
// hack/openstack/venv.sh and Debian's rabbitmq-server (hack/openstack/rabbitmq.sh);
// for its emulated BMCs (bmc/), sushy-tools' venv (hack/bmc/sushy-venv.sh) and
// Debian's openipmi and ipmitool (hack/bmc/openipmi.sh).

import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from '../controlplane/paths.ts';

export function defaultLog(line: string): void {
  process.stderr.write(`[openstack] ${line}\n`);
}

export function run(
  cmd: string,
  args: string[],
  opts: { env?: NodeJS.ProcessEnv; timeoutMs: number },
): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      cmd,
      args,
      { env: opts.env ?? process.env, timeout: opts.timeoutMs, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`${cmd} ${args.join(' ')} failed: ${err.message}\n${stderr}`));
        else resolve(stdout);
      },
    );
  });
}

/** hack/openstack/venv.sh: builds the venv the first time (minutes), prints its path. */
export async function ensureOpenStackVenv(log: (line: string) => void = defaultLog): Promise<string> {
  const script = join(repoRoot(), 'hack/openstack/venv.sh');
  return new Promise((resolve, reject) => {
    const child = execFile(script, [], { timeout: 30 * 60_000, maxBuffer: 4 * 1024 * 1024 }, (err, stdout) => {
      if (err) reject(new Error(`${script} failed: ${err.message}`));
      else resolve(stdout.trim().split('\n').pop() ?? '');
    });
    child.stderr?.on('data', (d: Buffer) => {
      for (const line of d.toString().split('\n')) if (line.trim()) log(line);
    });
  });
}

/** hack/openstack/rabbitmq.sh: installs Debian's rabbitmq-server when missing, prints its server script. */
export async function ensureRabbitmq(): Promise<string> {
  const out = await run(join(repoRoot(), 'hack/openstack/rabbitmq.sh'), [], { timeoutMs: 15 * 60_000 });
  return out.trim().split('\n').pop() ?? '';
}

/** hack/bmc/sushy-venv.sh: the venv with sushy-emulator (built the first time, seconds), prints its path. */
export async function ensureSushyVenv(): Promise<string> {
  const out = await run(join(repoRoot(), 'hack/bmc/sushy-venv.sh'), [], { timeoutMs: 15 * 60_000 });
  return out.trim().split('\n').pop() ?? '';
}

/** hack/bmc/openipmi.sh: installs Debian's openipmi and ipmitool when missing, prints the path of ipmi_sim. */
export async function ensureOpenIpmi(): Promise<string> {
  const out = await run(join(repoRoot(), 'hack/bmc/openipmi.sh'), [], { timeoutMs: 15 * 60_000 });
  return out.trim().split('\n').pop() ?? '';
}
