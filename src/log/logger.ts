// The process logger: JSON lines on stdout (pino), one child per component,
// and a child per request carrying `request_id` (the x-openstack-request-id
// the API echoes), so one grep follows a request through the API, the engine
// and the Nova calls it caused.

import { randomUUID } from 'node:crypto';
import { pino, type DestinationStream, type Level, type Logger } from 'pino';

export type { Logger } from 'pino';

export interface LoggerOptions {
  level: Level;
  /** Identity of this process (pod name or host-pid), on every line. */
  identity: string;
  version: string;
  /** Where lines go; stdout when omitted (tests pass a memory stream). */
  destination?: DestinationStream;
}

// Never write these, even at trace level: the keys under which tokens,
// passwords and application-credential secrets travel.
const REDACT = [
  'password',
  '*.password',
  'application_credential_secret',
  '*.application_credential_secret',
  'token',
  '*.token',
  'headers["x-auth-token"]',
  'headers["x-subject-token"]',
  '*.headers["x-auth-token"]',
  '*.headers["x-subject-token"]',
];

export function createLogger(opts: LoggerOptions): Logger {
  return pino(
    {
      name: 'masakari-operator',
      level: opts.level,
      base: { identity: opts.identity, version: opts.version },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: REDACT, censor: '[redacted]' },
    },
    opts.destination ?? pino.destination({ dest: 1, sync: true }),
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
