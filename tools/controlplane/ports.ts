// Free loopback ports for the processes we start (etcd, kube-apiserver, the
// operator, the simulator, a mini OpenStack).
//
// The port is released before its user binds it, sometimes a minute later
// (`make run` builds first). A port from the kernel's ephemeral range
// (net.ipv4.ip_local_port_range, 32768–60999 by default) can meanwhile become
// the local end of any outgoing connection, kube-apiserver's to etcd say, and
// the bind then fails with "address already in use" (seen in CI). So ports
// are picked below that range, where the kernel never assigns one by itself;
// only an explicit bind can take them, and below Kubernetes' NodePort range
// (30000-32767), which kube-proxy may serve on this machine. Callers still
// retry a start with new ports on "address already in use".
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** Fixed ports other software here binds by itself: never hand these out. */
const WELL_KNOWN = new Set([15868, 25672, 27017]);
const LOWEST = 20_000;
/** Kubernetes' default NodePort range starts here. */
const NODE_PORTS = 30_000;
const ATTEMPTS = 64;
/** Ports this process handed out already: two callers must not get the same one before either binds it. */
const handedOut = new Set<number>();

/** The kernel's ephemeral range, from /proc when it is readable. */
export function ephemeralRange(
  read: () => string = () => readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8'),
): [number, number] {
  try {
    const [lo, hi] = read().trim().split(/\s+/).map(Number);
    if (Number.isInteger(lo) && Number.isInteger(hi) && lo! > 0 && hi! >= lo!) return [lo!, hi!];
  } catch {
    // not Linux, or /proc is not mounted: assume the default range
  }
  return [32_768, 60_999];
}

/** The range free ports are picked from: below the ephemeral range, or above it when there is no room below. */
export function pickRange([lo, hi]: [number, number]): [number, number] | undefined {
  const below = Math.min(lo, NODE_PORTS) - 1;
  if (below - LOWEST >= 1_000) return [LOWEST, below];
  if (65_535 - (hi + 1) >= 1_000) return [hi + 1, 65_535];
  return undefined;
}

function tryListen(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', () => resolve(undefined));
    srv.listen(port, '127.0.0.1', () => {
      const addr = srv.address();
      const bound = typeof addr === 'object' && addr ? addr.port : undefined;
      srv.close(() => resolve(bound));
    });
  });
}

export async function freePort(): Promise<number> {
  const range = pickRange(ephemeralRange());
  if (range) {
    const [from, to] = range;
    for (let i = 0; i < ATTEMPTS; i++) {
      const port = from + Math.floor(Math.random() * (to - from + 1));
      if (WELL_KNOWN.has(port) || handedOut.has(port)) continue;
      if ((await tryListen(port)) === port) {
        handedOut.add(port);
        return port;
      }
    }
  }
  // No room outside the ephemeral range (or all tries taken): let the kernel pick.
  const port = await tryListen(0);
  if (!port) throw new Error('could not allocate a loopback port');
  handedOut.add(port);
  return port;
}
