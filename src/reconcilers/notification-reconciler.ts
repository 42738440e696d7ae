// Notifications created with kubectl/GitOps go through the same intake as a
// POST /v1/notifications: the source host must exist (Ready=False
// HostNotFound otherwise, admitted once it does) and not be on maintenance
// (HostOnMaintenance, for good, as the REST path's 409), and
// the same duplicate claims decide duplicates (DuplicateNotification,
// src/store/admission/notification-intake.ts claimFoundNotification).
// An admitted one gets uuid/id, sourceHostUuid, failoverSegmentUuid and phase
// new in status; the engine starts only once status.uuid and sourceHostUuid
// are there. Once admitted, a notification is the engine's: this reconciler
// never touches it again.
import { RESOURCES } from '../k8s/resources.ts';
import { LABELS } from '../model/constants.ts';
import type { HaHost, Notification } from '../model/types.ts';
import type { ReconcileResult } from '../runtime/types.ts';
import { duplicateNotification, hostNotFoundByName, hostOnMaintenance } from '../domain/messages.ts';
import { claimFoundNotification, hostSegmentUuid, objectUuid } from '../store/index.ts';
import { admissionStatusIfChanged, writeStatusUnlessGone } from '../store/index.ts';
import type { AdmissionDeps } from './admission.ts';
import { chooseId, chooseUuid, ensureMetadata, flagNotReady, reconcilerWriter } from './admission.ts';
import { isAdmitted, isAdmittedNotification, readyCondition, REASONS } from '../domain/admitted.ts';
import { effectiveFlags } from '../domain/host-flags.ts';
import { INDEX } from '../model/indexes.ts';

/**
 * A notification the REST path created moments ago is still being admitted
 * by that request (its status write follows the create); give it this long
 * before finishing the job ourselves.
 */
const REST_ADMISSION_GRACE_MS = 5_000;

function refusedForMaintenance(n: Notification): boolean {
  const ready = readyCondition(n);
  return ready?.status === 'False' && ready.reason === REASONS.hostOnMaintenance;
}

export async function reconcileNotification(deps: AdmissionDeps, name: string): Promise<ReconcileResult | void> {
  const { caches } = deps;
  let n: Notification | undefined = caches.notifications.get(name);
  if (!n || n.metadata.deletionTimestamp || isAdmittedNotification(n)) return;
  // Refused for its host's maintenance is final, as Masakari's 409 is (masakari/ha/api.py create_notification
  // raises HostOnMaintenanceError; nothing is stored). Otherwise clearing the maintenance of a repaired host would
  // admit, and run, the host failure that put it there: replayed from a saved copy, or applied while it was down.
  if (refusedForMaintenance(n)) return;

  const created = Date.parse(n.metadata.creationTimestamp ?? '');
  const age = deps.now().getTime() - created;
  if (n.metadata.labels?.[LABELS.uuid] && !Number.isNaN(created) && age < REST_ADMISSION_GRACE_MS) {
    return { requeueAfterMs: REST_ADMISSION_GRACE_MS - age };
  }

  const host: HaHost | undefined = caches.hosts
    .byIndex(INDEX.name, n.spec.hostname)
    .find((h) => isAdmitted(h) && h.status?.segmentUuid !== undefined);
  if (!host) {
    return flagNotReady(deps, RESOURCES.notifications, n, REASONS.hostNotFound, hostNotFoundByName(n.spec.hostname));
  }
  const invalid = deps.validators.notification(n.spec);
  if (invalid) return flagNotReady(deps, RESOURCES.notifications, n, REASONS.invalidSpec, invalid);
  if (effectiveFlags(host).onMaintenance) {
    const message = hostOnMaintenance(n.spec.hostname, n.spec.type);
    return flagNotReady(deps, RESOURCES.notifications, n, REASONS.hostOnMaintenance, message);
  }

  const hostUuid = objectUuid(host) ?? '';
  const segmentUuid = hostSegmentUuid(host) ?? '';
  const uuid = chooseUuid(n, caches.notifications);
  const window = deps.duplicateWindowSeconds;
  const intake = await claimFoundNotification({
    kube: deps.kube,
    namespace: deps.namespace,
    cache: caches.notifications,
    lifecycle: deps.lifecycle,
    notification: n,
    host,
    hostUuid,
    uuid,
    windowSeconds: window,
    pendingMs: deps.pendingClaimMs,
    now: deps.now,
  });
  if (intake === 'duplicate') {
    const message = duplicateNotification(n.spec.hostname, n.spec.type);
    return flagNotReady(deps, RESOURCES.notifications, n, REASONS.duplicate, message);
  }

  const id = await chooseId(n, caches.notifications, deps.ids.notifications);
  n = await ensureMetadata(deps, RESOURCES.notifications, n, {
    [LABELS.uuid]: uuid,
    [LABELS.id]: String(id),
    [LABELS.segmentUuid]: segmentUuid,
    [LABELS.hostUuid]: hostUuid,
  });
  if (!n) return;
  const status = admissionStatusIfChanged(
    n,
    {
      uuid,
      id,
      sourceHostUuid: hostUuid,
      failoverSegmentUuid: segmentUuid,
      phase: n.status?.phase ?? 'new',
    },
    deps.now(),
  );
  if (status) {
    const written = await writeStatusUnlessGone(reconcilerWriter(deps), RESOURCES.notifications, n, status);
    if (written) caches.notifications.upsertLocal(written);
  }
}
