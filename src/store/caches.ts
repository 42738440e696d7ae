// The informer caches the store reads from (one per kind), with the
// secondary indexes Masakari's lookups need. Index values come from status
// first and labels second, so an object is findable by uuid both before and
// after its status is written (a create is two writes: object, then status).
import type { Informer, InformerOptions } from '../runtime/types.ts';
import type { ResourceRef } from '../k8s/client.ts';
import { RESOURCES } from '../k8s/resources.ts';
import type { FailoverSegment, HaHost, Notification } from '../model/types.ts';
import { hostSegmentUuid, objectId, objectUuid } from './mapping.ts';
import { LABELS } from '../model/constants.ts';
import { INDEX } from '../model/indexes.ts';
import type { ConfigMap } from './configmap.ts';
import { cachedPayloadHash, fingerprintKey } from './admission/fingerprints.ts';
import { slimNotification } from './slim-notification.ts';
import { slimHost } from './slim-host.ts';
import { isAdmittedNotification } from '../domain/admitted.ts';

export interface StoreCaches {
  segments: Informer<FailoverSegment>;
  hosts: Informer<HaHost>;
  /** Without their history: see slimNotification. */
  notifications: Informer<Notification>;
}

export type InformerFactory = <T extends FailoverSegment | HaHost | Notification | ConfigMap>(
  ref: ResourceRef,
  opts: InformerOptions<T>,
) => Informer<T>;

/**
 * Which notifications a store's cache holds. 'all' for the REST facade and
 * the reconcilers. 'compute-host' for a process that only files and follows
 * host notifications (the Medik8s remediator without the API beside it):
 * a watch on the CRD's selectable field spec.type, so VM and PROCESS
 * notifications, the bulk of a failure storm, are never sent to it.
 */
export type NotificationScope = 'all' | 'compute-host';

export const COMPUTE_HOST_FIELD_SELECTOR = 'spec.type=COMPUTE_HOST';
const isComputeHostNotification = (n: Notification): boolean => n.spec?.type === 'COMPUTE_HOST';

/** The values that are set, each once. Without a Set: index functions run for every cached object. */
const present = (a: string | undefined, b?: string): string[] => {
  if (!a) return b ? [b] : [];
  return b && b !== a ? [a, b] : [a];
};
const idOf = (obj: FailoverSegment | HaHost | Notification): string[] => {
  const id = objectId(obj);
  if (id === undefined) return [];
  // The id label's own string when it says the same: a key string of its own per object is 100,000 more strings.
  const label = obj.metadata.labels?.[LABELS.id];
  const text = String(id);
  return [label === text ? label : text];
};
const uuidsOf = (obj: FailoverSegment | HaHost | Notification): string[] =>
  present(objectUuid(obj), obj.metadata.labels?.[LABELS.uuid]);

/**
 * Under each source host uuid it is filed by (status and label: they agree
 * once admitted), the duplicate fingerprint. Hashed once per cache update, so
 * an intake's duplicate check costs O(1), not a hash of every notification
 * of the host (which made a storm quadratic).
 */
function notificationFingerprints(n: Notification): string[] {
  if (!n.spec?.type || !n.spec.payload) return [];
  const hash = cachedPayloadHash(n.spec.payload);
  return notificationHostUuids(n).map((host) => fingerprintKey(host, n.spec.type, hash));
}

/** The source host uuids a notification is filed under: status and label (the same once admitted). */
export const notificationHostUuids = (n: Notification): string[] =>
  present(n.status?.sourceHostUuid, n.metadata.labels?.[LABELS.hostUuid]);

/**
 * Notifications not admitted yet, by spec.hostname: the ones a host's
 * arrival may admit (src/reconcilers/index.ts). Admitted ones, nearly all of
 * them, are not filed, so the index costs nothing per finished notification.
 */
const unadmittedHostname = (n: Notification): string[] => (isAdmittedNotification(n) ? [] : present(n.spec?.hostname));

/** Caches hold no managedFields: the runtime's informer drops them from every object (src/runtime/informer.ts). */
export function createStoreCaches(
  factory: InformerFactory,
  namespace: string,
  scope: NotificationScope = 'all',
): StoreCaches {
  return {
    segments: factory<FailoverSegment>(RESOURCES.segments, {
      namespace,
      indexes: { [INDEX.uuid]: uuidsOf, [INDEX.id]: idOf, [INDEX.name]: (s) => present(s.spec?.name) },
    }),
    hosts: factory<HaHost>(RESOURCES.hosts, {
      namespace,
      transform: slimHost,
      indexes: {
        [INDEX.uuid]: uuidsOf,
        [INDEX.id]: idOf,
        [INDEX.name]: (h) => present(h.spec?.name),
        [INDEX.segmentUuid]: (h) => present(hostSegmentUuid(h)),
        [INDEX.segmentRef]: (h) => present(h.spec?.segmentRef?.name),
      },
    }),
    notifications: factory<Notification>(RESOURCES.notifications, {
      namespace,
      transform: slimNotification,
      ...(scope === 'compute-host'
        ? { fieldSelector: COMPUTE_HOST_FIELD_SELECTOR, keep: isComputeHostNotification }
        : {}),
      indexes: {
        [INDEX.uuid]: uuidsOf,
        [INDEX.id]: idOf,
        [INDEX.fingerprint]: notificationFingerprints,
        [INDEX.unadmittedHostname]: unadmittedHostname,
      },
    }),
  };
}
