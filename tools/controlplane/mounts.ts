// Mounts a run dir can still hold after its processes died: kubelet's volume
// tmpfs, containerd's sandbox shm and rootfs overlays. rmdir on a mount point
// fails with EBUSY, so whoever removes a run dir detaches these first.
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';

/** Mount points at or below `dir`, deepest first (field 5 of mountinfo). */
export function mountsUnder(dir: string): string[] {
  let info = '';
  try {
    info = readFileSync('/proc/self/mountinfo', 'utf8');
  } catch {
    return []; // no /proc: nothing we could unmount anyway
  }
  return info
    .split('\n')
    .map((l) => l.split(' ')[4] ?? '')
    .filter((m) => m === dir || m.startsWith(dir + '/'))
    .sort((a, b) => b.length - a.length);
}

/** Lazily detaches every mount at or below `dir`; returns how many it tried. */
export function unmountUnder(dir: string): number {
  const mounts = mountsUnder(dir);
  for (const m of mounts) spawnSync('umount', ['-l', m], { stdio: 'ignore', timeout: 30_000 });
  return mounts.length;
}

/**
 * Removes `dir` with everything below it, detaching mounts first and once more
 * if a mount appeared meanwhile (a shim finishing late). Returns the error
 * instead of throwing, so a reaper can report it and go on.
 */
export function removeRunDir(dir: string): Error | undefined {
  for (let attempt = 0; ; attempt++) {
    unmountUnder(dir);
    try {
      rmSync(dir, { recursive: true, force: true });
      return undefined;
    } catch (e) {
      if (attempt >= 1) return e as Error;
    }
  }
}
