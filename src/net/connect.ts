// Knowing when a failed request never reached the server, so that even a
// POST (a Nova action, a Kubernetes create) may be sent again: nothing was
// written, so nothing happened. Shared by src/openstack and src/k8s.
//
// undici hands connect failures to the request as they are (no wrapping), and
// its error codes alone cannot tell every case apart: EHOSTUNREACH or
// ECONNRESET can also end an established connection after the request went
// out. So the dispatcher we build connects through `markingConnector`, which
// tags every error its connect step reports (DNS, refused, unreachable,
// connect timeout, TLS handshake and certificate failures): undici calls that
// step before a single byte of any request is written on the socket. For a
// dispatcher we did not build (tests inject undici's MockAgent; the Kubernetes
// transport's Agent), only the codes that exist solely before a connection is
// up count.

import { buildConnector } from 'undici';

/** Errors raised by a marking connector's connect step. */
const connectFailures = new WeakSet<object>();

/**
 * Codes that only a connection attempt can produce: a name lookup failure, a
 * refused SYN (a reset on an established socket is ECONNRESET or EPIPE, never
 * ECONNREFUSED) and undici's connect timeout.
 */
const PRE_CONNECTION_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** undici's connector (`connect` of an Agent), tagging each error of the connect step. */
export function markingConnector(options: buildConnector.BuildOptions): buildConnector.connector {
  const connect = buildConnector(options);
  return (opts, callback) =>
    connect(opts, (...args: Parameters<buildConnector.Callback>) => {
      if (args[0]) connectFailures.add(args[0]);
      callback(...args);
    });
}

/** True when `err` (or its cause) provably failed before the request was sent. */
export function neverReachedServer(err: unknown): boolean {
  for (let e = err, depth = 0; e && typeof e === 'object' && depth < 3; depth++) {
    if (connectFailures.has(e)) return true;
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && PRE_CONNECTION_CODES.has(code)) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}
