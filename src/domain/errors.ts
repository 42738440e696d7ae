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

/**
 * A MasakariError class of one status whose message Masakari builds from the
 * constructor's arguments: every fault below is one status and one message
 * from messages.ts, so the class says only which.
 */
function faultOf<A extends unknown[]>(status: number, message: (...args: A) => string) {
  return class extends MasakariError {
    constructor(...args: A) {
      super(status, message(...args));
    }
  };
}
/** For the faults whose message the caller words. */
const asGiven = (message: string) => message;

// 400
export class ValidationError extends faultOf(400, asGiven) {}
export class BadRequest extends faultOf(400, asGiven) {}
export class InvalidSortKey extends faultOf(400, msg.invalidSortKey) {}
export class MarkerNotFound extends faultOf(400, msg.markerNotFound) {}
export class ComputeNotFoundByName extends faultOf(400, msg.computeNotFoundByName) {}
export class HostNotFoundByName extends faultOf(400, msg.hostNotFoundByName) {}
export class NotificationWithoutVMoves extends faultOf(400, msg.notificationWithoutVMoves) {}

// 403
export class Forbidden extends faultOf(403, asGiven) {}
export class PolicyNotAuthorized extends Forbidden {
  constructor(action: string) {
    super(msg.policyNotAuthorized(action));
  }
}

// 404
export class SegmentNotFound extends faultOf(404, msg.failoverSegmentNotFound) {}
export class HostNotFound extends faultOf(404, asGiven) {
  static byId(id: string): HostNotFound {
    return new HostNotFound(msg.hostNotFound(id));
  }
  static underSegment(hostUuid: string, segmentUuid: string): HostNotFound {
    return new HostNotFound(msg.hostNotFoundUnderFailoverSegment(hostUuid, segmentUuid));
  }
}
export class NotificationNotFound extends faultOf(404, msg.notificationNotFound) {}
export class VMoveNotFound extends faultOf(404, msg.vmoveNotFound) {}

// 409
export class FailoverSegmentExists extends faultOf(409, msg.failoverSegmentExists) {}
export class HostExists extends faultOf(409, msg.hostExists) {}
export class FailoverSegmentInUse extends faultOf(409, asGiven) {}
export class HostInUse extends faultOf(409, asGiven) {}
export class DuplicateNotification extends faultOf(409, msg.duplicateNotification) {}
export class HostOnMaintenance extends faultOf(409, msg.hostOnMaintenance) {}

// 500: Masakari's answer when Nova fails in a way it does not translate.
export class UnexpectedApiError extends faultOf(500, msg.unexpectedApiError) {}

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
