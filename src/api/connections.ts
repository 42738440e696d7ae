// Limits on the REST port against slow or greedy clients (slowloris: many
// connections that trickle their headers or body, or just sit there).
//
// - At most `maxConnections` sockets are kept. A new connection over the cap
//   does not push out a working client: it evicts the oldest connection that
//   is not in the middle of a request (still sending its headers, or idle
//   between keep-alive requests). Only when every connection is busy is the
//   new one closed. So a flood of slow connections never locks out a real
//   client, and memory and file descriptors stay bounded.
// - headersTimeout / requestTimeout bound how long a client may take to send
//   its headers / whole request (Node answers 408 and closes), and the
//   keep-alive timeout how long an idle connection is kept.
// - An error answered before the request body was read (401 before the token
//   was checked, 413 for a declared Content-Length over the limit, 415...)
//   closes the connection instead of reading and discarding the rest of the
//   body (see pipeline.ts closeWithoutReading).

import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import { Server as TlsServer } from 'node:tls';
import type { Socket } from 'node:net';

export interface ConnectionLimits {
  maxConnections: number;
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
}

export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = {
  maxConnections: 512,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 60_000,
  keepAliveTimeoutMs: 5_000,
};

/** Applies the limits to an http or https Server; returns a view for tests and metrics. */
export function limitConnections(
  server: Server | HttpsServer,
  limits: ConnectionLimits = DEFAULT_CONNECTION_LIMITS,
): { open(): number; evicted(): number } {
  server.headersTimeout = limits.headersTimeoutMs;
  server.requestTimeout = limits.requestTimeoutMs;
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  // Checked often enough that a timeout is enforced within a second or two of being due.
  (server as Server & { connectionsCheckingInterval?: number }).connectionsCheckingInterval = 1_000;
  /** Insertion order is age order; true while a request on it is being served. */
  const sockets = new Map<Socket, { busy: boolean }>();
  let evicted = 0;

  // Over TLS a request's socket is the TLS socket, which exists once the handshake is done
  // (bounded by the server's handshakeTimeout).
  const connected = server instanceof TlsServer ? 'secureConnection' : 'connection';
  server.on(connected, (socket: Socket) => {
    sockets.set(socket, { busy: false });
    socket.once('close', () => sockets.delete(socket));
    if (sockets.size <= limits.maxConnections) return;
    for (const [old, state] of sockets) {
      if (state.busy || old === socket) continue;
      evicted += 1;
      sockets.delete(old);
      old.destroy();
      return;
    }
    evicted += 1;
    sockets.delete(socket);
    socket.destroy();
  });
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const state = sockets.get(req.socket);
    if (!state) return;
    state.busy = true;
    const done = (): void => {
      state.busy = false;
      // Back of the line: an idle keep-alive connection is evicted after the ones idle longer.
      if (sockets.delete(req.socket) && !req.socket.destroyed) sockets.set(req.socket, state);
    };
    res.once('finish', done);
    res.once('close', done);
  });
  return { open: () => sockets.size, evicted: () => evicted };
}
