// The process logger: JSON lines on stdout (pino), one child per component,
// and a child per request carrying `request_id` (the x-openstack-request-id
// the API echoes), so one grep follows a request through the API, the engine
// and the Nova calls it caused.

import { randomUUID } from 'node:crypto';
import { pino, type Bindings, type ChildLoggerOptions, type DestinationStream, type Level, type Logger } from 'pino';

export type { Logger } from 'pino';

export interface LoggerOptions {
  level: Level;
  /** Identity of this process (pod name or host-pid), on every line. */
  identity: string;
  version: string;
  /** Where lines go; stdout when omitted (tests pass a memory stream). */
  destination?: DestinationStream;
}

// Never write these, even at trace level: any key that names a password, a
// secret, a token or a credential, at any depth (os_privileged_user_password,
// auth.password, headers["x-auth-token"], application_credential_secret, a
// config section's nested options...). pino's own redact paths name fixed
// paths only (one level of "*"), so the walk is ours; it copies only objects
// that hold such a key and stops at REDACT_MAX_DEPTH (deeper values are
// replaced too: a log line has no business carrying them). Child logger
// bindings get the same walk when the child is made (pino's log formatter
// never sees them, and its bindings formatter sees only the root's).
const SENSITIVE_KEY = /password|secret|token|credential/i;
const CENSOR = '[redacted]';
const REDACT_MAX_DEPTH = 8;

/** value with every sensitive key's value censored; the same object when there is none. */
export function redactSensitive(value: unknown, depth = 0): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (depth >= REDACT_MAX_DEPTH) return CENSOR;
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    value.forEach((item, i) => {
      const r = redactSensitive(item, depth + 1);
      if (r !== item) (copy ??= [...value])[i] = r;
    });
    return copy ?? value;
  }
  // Errors keep pino's error serializer (message, stack); other class instances are left as they are.
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null) return value;
  let copy: Record<string, unknown> | undefined;
  for (const [key, item] of Object.entries(value)) {
    const r =
      SENSITIVE_KEY.test(key) && item !== undefined && item !== null ? CENSOR : redactSensitive(item, depth + 1);
    if (r !== item) (copy ??= { ...(value as Record<string, unknown>) })[key] = r;
  }
  return copy ?? value;
}

const redactObject = (o: Record<string, unknown>): Record<string, unknown> =>
  redactSensitive(o) as Record<string, unknown>;

/**
 * The logger, whose child() censors the bindings as the log formatter censors
 * a line. pino makes a child with Object.create(parent), so the children (and
 * theirs) inherit this child() and call it with themselves as `this`.
 */
function withRedactedBindings(log: Logger): Logger {
  const pinoChild = log.child as unknown as (this: Logger, bindings: Bindings, options?: ChildLoggerOptions) => Logger;
  log.child = function (this: Logger, bindings: Bindings, options?: ChildLoggerOptions) {
    return pinoChild.call(this, redactObject(bindings), options);
  } as unknown as Logger['child'];
  return log;
}

export function createLogger(opts: LoggerOptions): Logger {
  return withRedactedBindings(
    pino(
      {
        name: 'masakari-operator',
        level: opts.level,
        base: { identity: opts.identity, version: opts.version },
        timestamp: pino.stdTimeFunctions.isoTime,
        formatters: { level: (label) => ({ level: label }), log: redactObject },
      },
      opts.destination ?? pino.destination({ dest: 1, sync: true }),
    ),
  );
}

/** A new id in OpenStack's format (req-<uuid>). */
export function newRequestId(): string {
  return `req-${randomUUID()}`;
}

/** Child logger for one request or one unit of work: every line carries request_id. */
export function requestLogger(log: Logger, requestId: string): Logger {
  return log.child({ request_id: requestId });
}

/** Child logger for one component: every line carries component. */
export function componentLogger(log: Logger, component: string): Logger {
  return log.child({ component });
}
