// kube-apiserver's Go profiles (its /debug/pprof, served when the control
// plane starts with `profiling: true`), read through kubectl so the
// control plane's client certificate is used. Read a CPU profile with
// `go tool pprof -top FILE`, and what was allocated between two `allocs`
// profiles with `go tool pprof -top -sample_index=alloc_space -diff_base A B`.
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { kubectlPath } from './kubectl.ts';

function getRawBuffer(kubeconfig: string, path: string, timeoutMs: number): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) =>
    execFile(
      kubectlPath(),
      ['--kubeconfig', kubeconfig, 'get', '--raw', path],
      { encoding: 'buffer', maxBuffer: 256 << 20, timeout: timeoutMs },
      (err, stdout) => (err ? reject(err) : resolve(stdout)),
    ),
  );
}

/** A CPU profile of the next `seconds`, into `file`. */
export async function apiserverCpuProfile(kubeconfig: string, seconds: number, file: string): Promise<void> {
  await writeFile(
    file,
    await getRawBuffer(kubeconfig, `/debug/pprof/profile?seconds=${seconds}`, (seconds + 60) * 1000),
  );
}

/** The allocation profile so far (every allocation since the start, sampled), into `file`. */
export async function apiserverAllocs(kubeconfig: string, file: string): Promise<void> {
  await writeFile(file, await getRawBuffer(kubeconfig, '/debug/pprof/allocs', 60_000));
}
