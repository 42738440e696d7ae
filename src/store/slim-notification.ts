// What the store's notification cache holds of a Notification: everything its
// readers use, in as few bytes as the JavaScript heap allows. The api process
// caches every notification (lists, the duplicate check, the reconcilers),
// so its memory is this record times their number (docs/benchmarks.md,
// "Scale").
//
// 1. No history. The workflow details, the vmoves and the engine's
//    bookkeeping (but for its journal page count, which retention reads)
//    are most of a finished notification's bytes, and only three
//    requests read them: show at microversion 1.1+ and the two vmoves
//    requests, which read the Notification from the API server
//    (repository-reads.ts wholeNotification).
// 2. Shared strings. JSON parsing gives every object its own copy of every
//    string. A notification repeats its host's and segment's uuids, its
//    hostname, and values every notification has (namespace, kind, phase,
//    payload values, condition texts); its uuid is in a label and in status.
//    These are replaced by one shared copy each (a bounded pool, below).
// 3. Equal payloads are one object (host and process notifications repeat a
//    few), kept in the sender's key order, so the payload-order annotation
//    (written at intake, src/store/repository.ts) is not kept as a string of
//    its own; mapping.ts inSenderOrder then finds the keys already in order.
//    The admission seal is not kept either: the client checked it before the
//    cache saw the object (src/store/admission/seal.ts), and nothing reads it.
//    Equal condition lists are one list too, and status.createdAt is the
//    creationTimestamp string when it says the same (admission copies it).
//
// 4. Literal-shaped objects (compact-object.ts): every object of the copy is
//    built as an object literal would be, without the spill array that
//    spreads leave, a few words less per object.
//
// Objects are only ever replaced, never changed in place (informer.ts), so
// sharing strings between them is safe.
import { ANNOTATIONS, LABELS } from '../model/constants.ts';
import type { Notification, NotificationStatusBlock } from '../model/types.ts';
import { statusWithoutHistory } from './journal-pages.ts';
import { inSenderOrder } from './mapping.ts';
import { compact } from './compact-object.ts';
import { shared, sharedConditions, sharedValues } from './string-pool.ts';

/**
 * Payloads seen recently, by their JSON in sender order. Host and process
 * notifications carry a handful of distinct payloads ({"event": "STOPPED",
 * ...}), so each is kept once; a VM payload names its instance and is seldom
 * shared, hence the smaller bound.
 */
const PAYLOAD_POOL_LIMIT = 5_000;
const payloads = new Map<string, Record<string, string>>();

function sharedPayload(p: Record<string, string>): Record<string, string> {
  const key = JSON.stringify(p);
  const found = payloads.get(key);
  if (found !== undefined) return found;
  if (payloads.size >= PAYLOAD_POOL_LIMIT) payloads.clear();
  const kept = sharedValues(p) as Record<string, string>;
  payloads.set(key, kept);
  return kept;
}

/** Labels whose value is the notification's own. */
const OWN_LABELS: ReadonlySet<string> = new Set([LABELS.uuid, LABELS.id]);

function slimStatus(
  status: NotificationStatusBlock | undefined,
  creationTimestamp: string | undefined,
): NotificationStatusBlock | undefined {
  if (!status) return status;
  const rest = statusWithoutHistory(status);
  return compact({
    ...rest,
    ...(rest.phase !== undefined ? { phase: shared(rest.phase) } : {}),
    ...(rest.sourceHostUuid !== undefined ? { sourceHostUuid: shared(rest.sourceHostUuid) } : {}),
    ...(rest.failoverSegmentUuid !== undefined ? { failoverSegmentUuid: shared(rest.failoverSegmentUuid) } : {}),
    // Admission records creationTimestamp as createdAt: one string for both.
    ...(rest.createdAt !== undefined
      ? { createdAt: rest.createdAt === creationTimestamp ? creationTimestamp : rest.createdAt }
      : {}),
    ...(rest.updatedAt !== undefined ? { updatedAt: shared(rest.updatedAt) } : {}),
    ...(rest.conditions ? { conditions: sharedConditions(rest.conditions) } : {}),
  });
}

/** The store cache's copy of a Notification (see the header); the input is not changed. */
export function slimNotification(n: Notification): Notification {
  const created = shared(n.metadata.creationTimestamp);
  const status = slimStatus(n.status, created);
  const { annotations, labels } = n.metadata;
  const order = annotations?.[ANNOTATIONS.payloadOrder];
  let keptAnnotations = annotations;
  if (annotations && (order !== undefined || annotations[ANNOTATIONS.admissionSeal] !== undefined)) {
    const { [ANNOTATIONS.payloadOrder]: _order, [ANNOTATIONS.admissionSeal]: _seal, ...others } = annotations;
    keptAnnotations = Object.keys(others).length > 0 ? sharedValues(others) : undefined;
  }
  // The uuid label and status.uuid are one string (the label keeps its own when they differ).
  const sharedLabels = sharedValues(labels, OWN_LABELS);
  if (sharedLabels && status?.uuid !== undefined && sharedLabels[LABELS.uuid] === status.uuid) {
    sharedLabels[LABELS.uuid] = status.uuid;
  }
  const payload = n.spec?.payload;
  // Built without `delete`, which would put the object in V8's slower, larger dictionary mode.
  const { annotations: _annotations, labels: _labels, ...rest } = n.metadata;
  const metadata = compact({
    ...rest,
    ...(rest.namespace !== undefined ? { namespace: shared(rest.namespace) } : {}),
    ...(created !== undefined ? { creationTimestamp: created } : {}),
    ...(sharedLabels ? { labels: sharedLabels } : {}),
    ...(keptAnnotations ? { annotations: keptAnnotations } : {}),
  });
  const slim: Notification = { ...n, apiVersion: shared(n.apiVersion), kind: shared(n.kind), metadata };
  if (n.spec) {
    slim.spec = {
      ...n.spec,
      type: shared(n.spec.type),
      hostname: shared(n.spec.hostname),
      generatedTime: shared(n.spec.generatedTime),
      ...(payload ? { payload: sharedPayload(inSenderOrder(payload, order)) } : {}),
    };
  }
  if (status) slim.status = status;
  return compact(slim);
}
