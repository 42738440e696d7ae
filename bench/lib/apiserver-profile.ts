// kube-apiserver's Go profiles (its /debug/pprof, served when the control
// plane starts with `profiling: true`), read through kubectl so the
// control plane's client certificate is used. Read a CPU profile with
// `go tool pprof -top FILE`, and what was allocated between two `allocs`
// profiles with `go tool pprof -top -sample_index=alloc_space -diff_base A B`.
import { writeFile } from 'node:fs/promises';
import { getRawBytes } from './kubectl.ts';

/** A CPU profile of the next `seconds`, into `file`. */
export async function apiserverCpuProfile(kubeconfig: string, seconds: number, file: string): Promise<void> {
  await writeFile(
    file,
    await getRawBytes(kubeconfig, `/debug/pprof/profile?seconds=${seconds}`, (seconds + 60) * 1000),
  );
}

/** The allocation profile so far (every allocation since the start, sampled), into `file`. */
export async function apiserverAllocs(kubeconfig: string, file: string): Promise<void> {
  await writeFile(file, await getRawBytes(kubeconfig, '/debug/pprof/allocs', 60_000));
}
