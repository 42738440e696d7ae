// The store's door: everything outside src/store/ imports the store from here
// and from nowhere else (make lint: scripts/lint/layers.js, STORE_DOOR;
// src/lint/layers.test.ts puts a bypass back and sees it fail). The rest of
// src/store/ is private, so its files can change without a reader noticing.
//
// Masakari keeps its state in SQL; the store rebuilds its guarantees (unique
// names, integer ids, duplicate detection, soft deletes) on the Kubernetes
// API. See docs/design/store.md. The exports below are grouped by who reads
// them, one port each.

// The process's store and the REST facade's Repository (src/api/, src/app/).
export { createCrRepository } from './handle.ts';
export type { CrRepositoryHandle, CrRepositoryOptions, StoreParts } from './handle.ts';
export { createIdAllocator } from './ids.ts';
export type { IdAllocator } from './ids.ts';

// The admission seal: the key the app loads and hands to the API and engine.
export {
  SEAL_SECRET_NAME,
  createAdmissionSeal,
  loadAdmissionSealKey,
  statusAsStored,
  withSealedNotifications,
  withoutSealMarker,
} from './admission/seal.ts';
export type { AdmissionSeal } from './admission/seal.ts';

// The engine's notification store: the intake protocol's end (a sealed
// notification's standing, a yielded duplicate's delete: src/store/admission/,
// whose owner, notification-intake.ts, takes the REST path's), fresh reads past
// the cache, the journal's pages and the Ready condition it keeps in step.
export { deleteYieldedNotification, sealedIntakeStanding } from './admission/standing.ts';
export { readByUuidInto } from './fresh-reads.ts';
export { assembleNotification, countedPages, notificationUuidOf, pageObject, readPages } from './journal-pages.ts';
export type { JournalPage, PageLines } from './journal-pages.ts';
export { syncNotificationConditions, withReady } from './conditions.ts';
export { slimHost } from './slim-host.ts';

// The kubectl/GitOps reconcilers (src/reconcilers/): admission of objects
// others wrote, over the store's own caches, claims and ids.
export { admissionStatusIfChanged, writeStatusUnlessGone } from './admission/status.ts';
export type { AdmissionWriter } from './admission/status.ts';
export type { StoreDeps } from './admission/create.ts';
export { claimFoundNotification } from './admission/notification-intake.ts';
export { sweepNotificationClaims } from './admission/claim-lifetime.ts';
export { Lifecycle } from './lifecycle.ts';
export { hostSegmentUuid, objectId, objectUuid } from './mapping.ts';
export { claimObjectName, restObjectName } from './names.ts';
export type { ClaimKind } from './names.ts';
export type { ConfigMap } from './configmap.ts';
export { runRetention } from './retention.ts';

// The import and purge commands (src/cli/).
export { StoreImporter } from './import.ts';
export { byUuid, hostChanges, listImportTarget, segmentChanges } from './import-mapping.ts';
export type { ImportTarget, SourceHost, SourceSegment } from './import-mapping.ts';
export { purgeNotifications } from './retention.ts';
export type { PurgeResult } from './retention.ts';
