// The Repository contract (src/domain/repository.ts) over FailoverSegment,
// HaHost and Notification custom resources. Reads come from informer caches
// (repository-reads.ts); every write goes to the API server and its result is
// put back into the cache at once (upsertLocal/deleteLocal), so a read right
// after a write on this replica reflects it. Segment and host writes are in
// spec-writes.ts; a notification's intake is the admission folder's
// (admission/notification-intake.ts). How each SQL guarantee is rebuilt is
// explained in docs/design/store.md.
import { STORE_RETRY_AFTER_SECONDS, storeUnavailable } from './repository-reads.ts';
import { FIELD_MANAGERS } from '../model/constants.ts';
import type { Notification } from '../model/types.ts';
import type { NotificationRecord } from '../domain/records.ts';
import type { NewNotification, Repository } from '../domain/repository.ts';
import { NotFoundInStoreError, StoreUnavailableError } from '../domain/repository.ts';
import type { StoreDeps } from './admission/create.ts';
import { IntakeContendedError } from './admission/duplicate-claim.ts';
import { DEFAULT_PENDING_CLAIM_MS, NotificationIntake } from './admission/notification-intake.ts';
import { toNotificationRecord } from './mapping.ts';
import { SpecWrites } from './spec-writes.ts';
import { systemClock } from '../time/clock.ts';

/**
 * An API server failure during intake (storeUnavailable) or a claim that kept
 * contending: retryable, so 503 with Retry-After rather than 500;
 * masakari-monitors retries it.
 */
function intakeError(e: unknown): unknown {
  if (e instanceof IntakeContendedError) {
    return new StoreUnavailableError(`notification intake: ${e.message}`, STORE_RETRY_AFTER_SECONDS);
  }
  return storeUnavailable(e, 'notification intake');
}

export interface CrRepositoryDeps extends StoreDeps {
  pendingClaimMs?: number;
  now?: () => Date;
}

export class CrRepository extends SpecWrites implements Repository {
  private readonly intake: NotificationIntake;

  constructor(deps: CrRepositoryDeps) {
    const now = deps.now ?? (() => systemClock.now());
    super({ ...deps, fieldManager: FIELD_MANAGERS.api, now });
    this.intake = new NotificationIntake({
      ...deps,
      pendingClaimMs: deps.pendingClaimMs ?? DEFAULT_PENDING_CLAIM_MS,
      now,
    });
  }

  async createNotification(n: NewNotification, windowSeconds: number): Promise<NotificationRecord> {
    const host = this.hostObject(n.source_host_uuid);
    if (!host) throw new NotFoundInStoreError(`host ${n.source_host_uuid} not found`);
    let accepted: Notification;
    try {
      accepted = await this.intake.accept(n, host, windowSeconds);
    } catch (e) {
      throw intakeError(e);
    }
    return toNotificationRecord(accepted);
  }

  /** Resolves once every background status write of a create has settled (graceful stop, tests). */
  settle(): Promise<void> {
    return this.intake.settle();
  }
}
