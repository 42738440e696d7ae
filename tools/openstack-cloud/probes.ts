// How the bring-up sees that a service answers: a TCP port accepting
// connections, or an HTTP status (undefined while nothing answers).

import { connect } from 'node:net';

export function tcpOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = connect({ host: '127.0.0.1', port });
    sock.setTimeout(1_000);
    sock.once('connect', () => {
      sock.destroy();
      resolve(true);
    });
    sock.once('error', () => resolve(false));
    sock.once('timeout', () => {
      sock.destroy();
      resolve(false);
    });
  });
}

export async function httpStatus(url: string): Promise<number | undefined> {
  try {
    const r = await fetch(url, { signal: AbortSignal.timeout(5_000) });
    await r.arrayBuffer();
    return r.status;
  } catch {
    return undefined;
  }
}
