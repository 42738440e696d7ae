// The TCP load balancer in front of the API servers of the HA control plane
// (controlplane.ts, shape 'ha'): what a cloud load balancer or haproxy in
// `mode tcp` does in production. TLS passes through untouched, so clients
// verify the API servers' own certificate. A connection goes to the next
// backend in turn; a backend that refuses (killed, restarting) is skipped,
// as a health-checking balancer would. It runs in the owner's process, so it
// dies with it and needs no supervision, and resetAll() can reset every
// open connection at once (a balancer failover or reload in production).
import { connect, createServer } from 'node:net';
import type { Server, Socket } from 'node:net';

export interface Balancer {
  port: number;
  /** Connections currently proxied. */
  connections(): number;
  /** Resets (TCP RST) every proxied connection, both ends; returns how many. */
  resetAll(): number;
  close(): Promise<void>;
}

/**
 * TCP RST where it can be sent: after end() (a shutdown request) libuv refuses
 * the reset (uv_tcp_close_reset: EINVAL) and the socket would never close,
 * keeping its process from exiting; such a socket is closed plainly.
 */
function reset(socket: Socket): void {
  if (socket.destroyed) return;
  if (socket.writableEnded) socket.destroy();
  else socket.resetAndDestroy();
}

/** How long one backend may take to accept before the next is tried. */
const CONNECT_TIMEOUT_MS = 2_000;

function connectTo(port: number): Promise<Socket | undefined> {
  return new Promise((resolve) => {
    const upstream = connect({ host: '127.0.0.1', port });
    const fail = (): void => {
      upstream.destroy();
      resolve(undefined);
    };
    upstream.setTimeout(CONNECT_TIMEOUT_MS, fail);
    upstream.once('error', fail);
    upstream.once('connect', () => {
      upstream.setTimeout(0);
      upstream.removeListener('error', fail);
      resolve(upstream);
    });
  });
}

/** Listens on 127.0.0.1:port and spreads connections over backends() (ports on 127.0.0.1), skipping dead ones. */
export async function startBalancer(port: number, backends: () => number[]): Promise<Balancer> {
  const pairs = new Set<[Socket, Socket]>();
  let next = 0;

  const onConnection = async (client: Socket): Promise<void> => {
    client.pause();
    client.on('error', () => undefined);
    const ports = backends();
    let upstream: Socket | undefined;
    for (let i = 0; i < ports.length && !upstream && !client.destroyed; i++) {
      upstream = await connectTo(ports[(next + i) % ports.length]!);
    }
    next = (next + 1) % Math.max(ports.length, 1);
    if (!upstream || client.destroyed) {
      upstream?.destroy();
      reset(client);
      return;
    }
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    // Whoever holds the other end keeps its own process alive; the balancer must not.
    client.unref();
    upstream.unref();
    // An end that resets resets the other, so a client sees a dead API server as a reset, not a hang.
    const end = (other: Socket) => (err?: Error) => {
      pairs.delete(pair);
      if (err) reset(other);
      else other.end();
    };
    upstream.on('error', end(client));
    client.on('error', end(upstream));
    // pipe() has already ended the other side on a clean end; a close is final, so the other
    // goes at once: a shutdown or write still pending on it would keep the owner from exiting.
    upstream.on('close', () => {
      pairs.delete(pair);
      client.destroy();
    });
    client.on('close', () => {
      pairs.delete(pair);
      upstream.destroy();
    });
    client.pipe(upstream);
    upstream.pipe(client);
    client.resume();
  };

  const server: Server = createServer({ allowHalfOpen: false }, (client) => void onConnection(client));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.removeListener('error', reject);
      resolve();
    });
  });
  // The owner's event loop must not wait for the balancer (as for the processes: stop() ends it).
  server.unref();

  const resetAll = (): number => {
    const n = pairs.size;
    for (const [client, upstream] of [...pairs]) {
      reset(client);
      reset(upstream);
    }
    pairs.clear();
    return n;
  };
  return {
    port,
    connections: () => pairs.size,
    resetAll,
    close: () =>
      new Promise<void>((resolve) => {
        resetAll();
        server.close(() => resolve());
      }),
  };
}
