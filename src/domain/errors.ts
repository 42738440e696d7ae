// Masakari's errors as the API reports them: each carries the HTTP status,
// the fault name of the JSON error body (wsgi.py Fault._fault_names) and
// Masakari's message. The domain throws them; src/api renders them.

import * as msg from './messages.ts';

const FAULT_NAMES: Record<number, string> = {
  400: 'badRequest',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'itemNotFound',
  405: 'badMethod',
  409: 'conflictingRequest',
  413: 'overLimit',
  415: 'badMediaType',
  429: 'overLimit',
  501: 'notImplemented',
  503: 'serviceUnavailable',
};

/** The fault name Masakari uses for a status (masakariFault for anything unlisted, 406 and 500 included). */
export function faultNameFor(status: number): string {
  return FAULT_NAMES[status] ?? 'masakariFault';
}

export class MasakariError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = new.target.name;
  }

  get faultName(): string {
    return faultNameFor(this.status);
  }
}

// 400
export class ValidationError extends MasakariError {
  constructor(detail: string) {
    super(400, detail);
  }
}
export class BadRequest extends MasakariError {
  constructor(message: string) {
    super(400, message);
  }
}
export class InvalidSortKey extends MasakariError {
  constructor(key: string) {
    super(400, msg.invalidSortKey(key));
  }
}
export class MarkerNotFound extends MasakariError {
  constructor(marker: string) {
    super(400, msg.markerNotFound(marker));
  }
}
export class ComputeNotFoundByName extends MasakariError {
  constructor(name: string) {
    super(400, msg.computeNotFoundByName(name));
  }
}
export class HostNotFoundByName extends MasakariError {
  constructor(name: string) {
    super(400, msg.hostNotFoundByName(name));
  }
}
export class NotificationWithoutVMoves extends MasakariError {
  constructor(id: string) {
    super(400, msg.notificationWithoutVMoves(id));
  }
}

// 403
export class Forbidden extends MasakariError {
  constructor(message: string) {
    super(403, message);
  }
}
export class PolicyNotAuthorized extends Forbidden {
  constructor(action: string) {
    super(msg.policyNotAuthorized(action));
  }
}

// 404
export class SegmentNotFound extends MasakariError {
  constructor(id: string) {
    super(404, msg.failoverSegmentNotFound(id));
  }
}
export class HostNotFound extends MasakariError {
  constructor(message: string) {
    super(404, message);
  }
  static byId(id: string): HostNotFound {
    return new HostNotFound(msg.hostNotFound(id));
  }
  static underSegment(hostUuid: string, segmentUuid: string): HostNotFound {
    return new HostNotFound(msg.hostNotFoundUnderFailoverSegment(hostUuid, segmentUuid));
  }
}
export class NotificationNotFound extends MasakariError {
  constructor(id: string) {
    super(404, msg.notificationNotFound(id));
  }
}
export class VMoveNotFound extends MasakariError {
  constructor(id: string) {
    super(404, msg.vmoveNotFound(id));
  }
}

// 409
export class FailoverSegmentExists extends MasakariError {
  constructor(name: string) {
    super(409, msg.failoverSegmentExists(name));
  }
}
export class HostExists extends MasakariError {
  constructor(name: string) {
    super(409, msg.hostExists(name));
  }
}
export class FailoverSegmentInUse extends MasakariError {
  constructor(message: string) {
    super(409, message);
  }
}
export class HostInUse extends MasakariError {
  constructor(message: string) {
    super(409, message);
  }
}
export class DuplicateNotification extends MasakariError {
  constructor(host: string, type: string) {
    super(409, msg.duplicateNotification(host, type));
  }
}
export class HostOnMaintenance extends MasakariError {
  constructor(host: string, type: string) {
    super(409, msg.hostOnMaintenance(host, type));
  }
}

// 500: Masakari's answer when Nova fails in a way it does not translate.
export class UnexpectedApiError extends MasakariError {
  constructor(kind: string) {
    super(500, msg.unexpectedApiError(kind));
  }
}

// 503: the store's API server failed during a write that is safe to retry
// (Masakari would answer 500 for a database error; a 503 with Retry-After
// tells masakari-monitors and other clients to try again).
export class ServiceUnavailable extends MasakariError {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(503, message);
  }
}
