// What the webhook decides for one AdmissionRequest on FailoverSegment,
// HaHost and Notification: the rules the Masakari API applies on the REST
// path (src/domain/ha-service.ts), in the same order and with the same
// messages, applied to kubectl/GitOps writes before they are stored.
//
// Reads come from the API process's informer caches (through the
// Repository), so the uniqueness checks are an early, friendly refusal: two
// creates racing past the webhook are still decided atomically by the name
// claims of the store (src/store/claims.ts), and the loser gets Ready=False
// NameConflict. The in-use rule reads the same caches the REST path reads.
import type { Logger } from 'pino';
import { GROUP, KINDS } from '../model/constants.ts';
import type { FailoverSegment, HaHost, MasakariObject, Notification } from '../model/types.ts';
import type { Repository } from '../domain/repository.ts';
import type { ComputeHostChecker } from '../domain/compute-host-checker.ts';
import { MasakariError } from '../domain/errors.ts';
import {
  computeNotFoundByName,
  failoverSegmentExists,
  failoverSegmentInUseDelete,
  failoverSegmentInUseUpdate,
  hostExists,
  hostInUseDelete,
  hostInUseUpdate,
  hostNotFoundByName,
  hostOnMaintenance,
} from '../domain/messages.ts';
import type { SpecValidators } from '../domain/spec-validators.ts';
import type { AdmissionRequest, Verdict } from './review.ts';
import { allow, deny } from './review.ts';
import * as msg from './messages.ts';
import { isAdmitted } from '../domain/admitted.ts';
import { staleness } from '../domain/freshness.ts';

/**
 * Who may write without being checked: the operator's own components (the
 * store, the reconcilers, the engine). This is a consistency check, not an
 * authorization boundary (RBAC decides who may write at all), but it must not
 * be a way around the rules either: a field manager is whatever the client
 * says (`kubectl --field-manager=masakari-api`), so it only counts together
 * with a user name that is the operator's (the API server sets
 * userInfo.username from the credentials, the client cannot choose it).
 */
export interface TrustPolicy {
  /** Field managers the operator writes with (FIELD_MANAGERS). */
  fieldManagers: readonly string[];
  /**
   * The operator's identities (in a pod: its service account; in local runs:
   * the control plane's admin). A create/update passes unchecked only when it
   * comes from one of these AND carries one of fieldManagers, so ordinary
   * kubectl writes of a user the operator shares (local runs) are still checked.
   */
  operatorUsers: readonly string[];
  /**
   * Users whose DELETEs are the operator's (in a pod: the api's service
   * account), since DeleteOptions carry no field manager. Only identities the
   * operator has to itself belong here: a shared one (local runs) would let
   * its kubectl deletes through. Without them deletes are always checked; the
   * cascades still pass, because hosts of a segment being deleted are no
   * longer in use (see host()).
   */
  deleters?: readonly string[];
}

export interface RulesDeps {
  /** The API process's repository: reads only, from its informer caches. */
  repo: Repository;
  /**
   * Whether a FailoverSegment of this metadata.name exists at all (admitted or
   * not yet), for the warning about a host applied before its segment.
   */
  segmentExists: (name: string) => Promise<boolean>;
  /** Masakari's is_failover_segment_under_recovery (HaService.isUnderRecovery). */
  underRecovery: (segmentUuid: string) => boolean;
  /** Undefined when no Nova is configured: every host is refused (as Masakari refuses when it cannot ask Nova). */
  compute: ComputeHostChecker | undefined;
  validators: SpecValidators;
  trust: TrustPolicy;
  /** The Nova check must answer inside the webhook's timeoutSeconds; past this it is refused. */
  novaTimeoutMs: number;
  /**
   * [DEFAULT] notifications_expired_interval and the clock: a notification
   * the engine will fail for its generated_time (src/domain/freshness.ts) is
   * warned about. None: no such warning.
   */
  freshness?: { expiredIntervalS: number; now: () => Date };
  log: Logger;
}

// Status codes and reasons the API server hands back to the client (kubectl prints the reason).
const BAD_REQUEST = { code: 400, reason: 'BadRequest' } as const;
const CONFLICT = { code: 409, reason: 'Conflict' } as const;
const INVALID = { code: 422, reason: 'Invalid' } as const;
const FORBIDDEN = { code: 403, reason: 'Forbidden' } as const;
const UNAVAILABLE = { code: 503, reason: 'ServiceUnavailable' } as const;
const refuse = (kind: { code: number; reason: string }, message: string): Verdict =>
  deny(kind.code, kind.reason, message);

/** JSON with sorted keys: equal specs compare equal whatever the key order. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>)
      .filter(([, x]) => x !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonical(x)}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

const sameSpec = (a: MasakariObject | undefined, b: MasakariObject | undefined): boolean =>
  canonical(a?.spec) === canonical(b?.spec);

/** A host's spec without spec.fencing (an OpenKeel extension: kubectl/GitOps only, no Masakari rule applies). */
const masakariHostSpec = (h: HaHost | undefined): unknown => {
  if (!h?.spec) return h?.spec;
  const { fencing: _fencing, ...rest } = h.spec;
  return rest;
};

/** The Masakari uuid of an object visible through the API; hidden objects have no notifications to protect. */
const admittedUuid = (obj: MasakariObject | undefined): string | undefined =>
  obj && isAdmitted(obj) ? obj.status?.uuid : undefined;

/** One line about a failed Nova call (Masakari's 500 text ends with the exception class on its last line). */
function failureDetail(e: unknown): string {
  const text = e instanceof Error ? e.message : String(e);
  return text.split('\n').pop() || text;
}

export class AdmissionRules {
  constructor(private readonly deps: RulesDeps) {}

  async review(req: AdmissionRequest): Promise<Verdict> {
    // Status (and any other subresource) is the operator's; the configuration does not route it here anyway.
    if (req.subResource) return allow();
    if (req.kind.group !== GROUP) return allow();
    if (this.trusted(req)) return allow();
    const object = req.object as MasakariObject | undefined;
    const old = req.oldObject as MasakariObject | undefined;
    // Edits of an object being deleted only remove finalizers; deletion was checked when it started.
    if (req.operation === 'UPDATE' && (old?.metadata?.deletionTimestamp || object?.metadata?.deletionTimestamp)) {
      return allow();
    }
    switch (req.kind.kind) {
      case KINDS.segment.kind:
        return this.segment(req, object as FailoverSegment | undefined, old as FailoverSegment | undefined);
      case KINDS.host.kind:
        return this.host(req, object as HaHost | undefined, old as HaHost | undefined);
      case KINDS.notification.kind:
        return this.notification(req, object as Notification | undefined, old as Notification | undefined);
      default:
        return allow();
    }
  }

  /** The operator's own write (TrustPolicy): the user name decides, the field manager only narrows it. */
  private trusted(req: AdmissionRequest): boolean {
    const { fieldManagers, operatorUsers, deleters } = this.deps.trust;
    const user = req.userInfo?.username;
    if (user === undefined) return false;
    if (req.operation === 'DELETE') return deleters?.includes(user) ?? false;
    const manager = req.options?.fieldManager;
    return operatorUsers.includes(user) && manager !== undefined && fieldManagers.includes(manager);
  }

  // ---------------------------------------------------------------- FailoverSegment

  /** Order of segments.py create/update/delete: schema (400), in use (409), name taken (409). */
  private segment(req: AdmissionRequest, seg?: FailoverSegment, old?: FailoverSegment): Verdict {
    if (req.operation === 'DELETE') {
      const uuid = admittedUuid(old);
      if (uuid && this.deps.underRecovery(uuid)) return refuse(CONFLICT, failoverSegmentInUseDelete(uuid));
      return allow();
    }
    if (!seg?.spec) return refuse(BAD_REQUEST, msg.missingSpec(KINDS.segment.kind));
    if (req.operation === 'UPDATE' && sameSpec(seg, old)) return allow();
    const invalid = this.deps.validators.segment(seg.spec);
    if (invalid) return refuse(BAD_REQUEST, invalid);
    if (req.operation === 'UPDATE') {
      const uuid = admittedUuid(old);
      if (uuid && this.deps.underRecovery(uuid)) return refuse(CONFLICT, failoverSegmentInUseUpdate(uuid));
      if (old?.spec?.name === seg.spec.name) return allow();
    }
    const self = seg.metadata?.name ?? req.name;
    const holder = this.deps.repo.listSegments().find((s) => s.name === seg.spec.name && s.k8sName !== self);
    if (holder) return refuse(CONFLICT, failoverSegmentExists(seg.spec.name));
    return allow();
  }

  // ---------------------------------------------------------------- HaHost

  /** Order of hosts.py create/update/delete: schema (400), in use (409), Nova (400), name taken (409). */
  private async host(req: AdmissionRequest, host?: HaHost, old?: HaHost): Promise<Verdict> {
    if (req.operation === 'DELETE') {
      const uuid = admittedUuid(old);
      // A host whose segment is being deleted is not visible, so the segment's cascade is never blocked here.
      const segmentUuid = old?.status?.segmentUuid;
      if (uuid && segmentUuid && this.deps.underRecovery(segmentUuid)) return refuse(CONFLICT, hostInUseDelete(uuid));
      return allow();
    }
    if (!host?.spec) return refuse(BAD_REQUEST, msg.missingSpec(KINDS.host.kind));
    if (req.operation === 'UPDATE' && sameSpec(host, old)) return allow();
    // A change of spec.fencing alone (the schema validates it) passes even while the host is in use: a BMC
    // address fixed while a failing fence holds the host's recovery is what lets that recovery go on.
    if (req.operation === 'UPDATE' && canonical(masakariHostSpec(host)) === canonical(masakariHostSpec(old))) {
      return allow();
    }
    if (req.operation === 'UPDATE' && canonical(host.spec.segmentRef) !== canonical(old?.spec?.segmentRef)) {
      return refuse(INVALID, msg.segmentRefImmutable());
    }
    const invalid = this.deps.validators.host(host.spec);
    if (invalid) return refuse(BAD_REQUEST, invalid);
    const warnings: string[] = [];
    if (req.operation === 'UPDATE') {
      const uuid = admittedUuid(old);
      const segmentUuid = old?.status?.segmentUuid;
      if (uuid && segmentUuid && this.deps.underRecovery(segmentUuid)) return refuse(CONFLICT, hostInUseUpdate(uuid));
      if (old?.spec?.name === host.spec.name) return allow();
    } else if (!(await this.segmentExists(host.spec.segmentRef?.name ?? ''))) {
      // Not refused: GitOps may apply a host before its segment; the reconciler admits it once the segment is.
      warnings.push(msg.segmentNotYetThere(host.spec.segmentRef?.name ?? ''));
    }
    const nova = await this.novaKnows(host.spec.name, req.uid);
    if (nova) return nova;
    const self = host.metadata?.name ?? req.name;
    const holder = this.deps.repo.getHostByName(host.spec.name);
    if (holder && holder.k8sName !== self) return refuse(CONFLICT, hostExists(host.spec.name));
    return allow(warnings);
  }

  /** Visible segments answer at once; otherwise ask (a failed lookup is no reason to warn). */
  private async segmentExists(name: string): Promise<boolean> {
    if (this.deps.repo.listSegments().some((s) => s.k8sName === name)) return true;
    return this.deps.segmentExists(name).catch(() => true);
  }

  /**
   * compute/nova.py find_compute_service, fail-closed: a host Nova does not
   * know is refused with Masakari's message, and so is any host while Nova
   * cannot be asked (Masakari's API answers 500 then; registering a host
   * nobody verified would only fail later, in a recovery).
   */
  private async novaKnows(name: string, requestId: string): Promise<Verdict | undefined> {
    const { compute, novaTimeoutMs, log } = this.deps;
    if (!compute) return refuse(UNAVAILABLE, msg.novaNotConfigured(name));
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), novaTimeoutMs);
    });
    try {
      const known = await Promise.race([compute.exists(name, { requestId }), deadline]);
      if (known === 'timeout') {
        log.warn({ host: name, timeoutMs: novaTimeoutMs }, 'Nova host check timed out; refusing the host');
        return refuse(UNAVAILABLE, msg.novaUnavailable(name, `no answer within ${novaTimeoutMs} ms`));
      }
      return known ? undefined : refuse(BAD_REQUEST, computeNotFoundByName(name));
    } catch (e) {
      if (e instanceof MasakariError && e.status === 403) return refuse(FORBIDDEN, e.message);
      log.warn({ err: e, host: name }, 'Nova host check failed; refusing the host');
      return refuse(UNAVAILABLE, msg.novaUnavailable(name, failureDetail(e)));
    } finally {
      clearTimeout(timer);
    }
  }

  // ---------------------------------------------------------------- Notification

  /**
   * The payload rules of notifications.py (CEL covers most; the validators
   * are the single source of the wording). Unknown or maintenance hosts,
   * duplicates and a stale generated_time are only warned about: the reconciler decides them through
   * the duplicate claims (src/store/admission/duplicate-claim.ts), atomically, and reports them in Ready.
   */
  private notification(req: AdmissionRequest, n?: Notification, old?: Notification): Verdict {
    if (req.operation === 'DELETE') return allow();
    if (!n?.spec) return refuse(BAD_REQUEST, msg.missingSpec(KINDS.notification.kind));
    if (req.operation === 'UPDATE') {
      return sameSpec(n, old) ? allow() : refuse(INVALID, msg.notificationSpecImmutable());
    }
    const invalid = this.deps.validators.notification(n.spec);
    if (invalid) return refuse(BAD_REQUEST, invalid);
    const host = this.deps.repo.getHostByName(n.spec.hostname);
    if (!host) return allow([msg.notificationWillBeFlagged(hostNotFoundByName(n.spec.hostname))]);
    if (host.on_maintenance) {
      return allow([msg.notificationRefusedForGood(hostOnMaintenance(n.spec.hostname, n.spec.type))]);
    }
    const fresh = this.deps.freshness;
    const stale =
      fresh &&
      staleness(
        { uuid: n.metadata?.name ?? '', generatedTime: n.spec.generatedTime },
        fresh.now().getTime(),
        fresh.expiredIntervalS,
      );
    return stale ? allow([msg.notificationWillFail(stale.reason)]) : allow();
  }
}
