// What a controller (masakari/api/openstack/ha/*.py) is here: one handler
// per Routes action it implements. An action Routes declares that the
// controller lacks is a 405 badMethod (wsgi.py Resource._get_method), so the
// handlers present are the resource's implemented methods.

import type { ApiVersion } from '../../domain/api-version.ts';
import type { HaService } from '../../domain/ha-service.ts';
import type { Repository } from '../../domain/repository.ts';
import { MasakariError } from '../../domain/errors.ts';
import type { RequestContext } from '../auth.ts';
import type { PolicyEnforcer } from '../policy.ts';
import { MASAKARI_API } from '../policy.ts';
import type { Action } from '../routes.ts';
import type { Incoming } from '../wsgi-request.ts';

/** One API call after routing, version negotiation and body parsing. */
export interface Call {
  req: Incoming;
  ctx: RequestContext;
  version: ApiVersion;
  /** The parsed JSON body (null: no body; undefined: a method without one). */
  body: unknown;
  /** The member id ('' on collection actions). */
  id: string;
  /** The parent's id under segments/{segment_id} or notifications/{notification_id} ('' elsewhere). */
  parentId: string;
}

/** The outcome of a handler: a document and its status (null document = empty body). */
export interface Result {
  status: number;
  doc: unknown;
}

export type Handler = (call: Call) => Result | Promise<Result>;
export type Controller = Partial<Record<Action, Handler>>;

export interface ControllerDeps {
  service: HaService;
  repo: Repository;
  policy: PolicyEnforcer;
}

/** Policy checks under os_masakari_api:<alias>:<action>, against the caller's own project. */
export function policyFor(policy: PolicyEnforcer, alias: string) {
  const target = (ctx: RequestContext) => ({ project_id: ctx.projectId, user_id: ctx.userId });
  return {
    authorize: (ctx: RequestContext, action: string) =>
      policy.authorize(`${MASAKARI_API}:${alias}:${action}`, target(ctx), ctx.credentials),
    check: (ctx: RequestContext, rule: string) => policy.check(rule, target(ctx), ctx.credentials),
  };
}

/** A schema validator's verdict: a message is a 400. */
export function refuseInvalid(detail: string | undefined): void {
  if (detail !== undefined) throw new MasakariError(400, detail);
}

/** The body, once its schema has accepted it. */
export function validBody(call: Call): Record<string, unknown> {
  return call.body as Record<string, unknown>;
}

/** The request id Nova gets: the caller's own when well-formed, else this request's. */
export function novaRequestId(call: Call): string {
  return call.req.globalRequestId ?? call.req.requestId;
}
