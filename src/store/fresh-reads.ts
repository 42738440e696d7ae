// Read-your-writes across API replicas. Each replica answers from its own
// informer caches, which see another replica's write only when its watch
// event arrives (usually milliseconds, seconds when the API server is busy).
// So "POST a segment through replica A, then POST a host into it through
// replica B" could be answered 404 by B. Masakari, reading one SQL database,
// never does that.
//
// A request's lookups by uuid that miss the cache are recorded (per request,
// through AsyncLocalStorage). When the request then fails with a not-found
// error, the missed objects are read from the API server (a list by the uuid
// label: a quorum read), the ones found are put into the cache, and the
// request runs once more. A request whose lookups all hit never pays for it,
// and the read is bounded: one list per missed uuid, at most MAX_MISSES.
//
// A lookup of a host by its Masakari name (POST /v1/notifications names the
// host, masakari/ha/api.py create_notification) reads the host's name claim
// (claims.ts: a ConfigMap named from the exact name, created before the
// host), then the host it names, and the host's segment when that is missing
// too: a monitor may send its first notification right after the host was
// added through another replica.

import { AsyncLocalStorage } from 'node:async_hooks';
import type { KubeClient, ResourceRef } from '../k8s/client.ts';
import { RESOURCES } from '../k8s/resources.ts';
import { LABELS } from '../model/constants.ts';
import type { HaHost, MasakariObject } from '../model/types.ts';
import type { Informer } from '../runtime/types.ts';
import type { StoreCaches } from './caches.ts';
import { isAdmitted } from '../domain/admitted.ts';
import { getIfExists } from '../k8s/get-if-exists.ts';
import { INDEX } from '../model/indexes.ts';
import type { ConfigMap } from './configmap.ts';
import { claimObjectName } from './names.ts';
import type { SealedVisibility } from './admission/visibility.ts';

export type MissedKind = 'segment' | 'host' | 'notification' | 'hostName';

/** Lookups per request that are checked against the API server; more is not a client's mistake. */
const MAX_MISSES = 4;

interface Miss {
  kind: MissedKind;
  /** The uuid, or for hostName the Masakari host name. */
  key: string;
}

const misses = new AsyncLocalStorage<Map<string, Miss>>();

/**
 * What a Kubernetes label value may be (63 characters at most). Every uuid we
 * store is one, as the uuid label; a path id that is not (schemathesis sends
 * any Unicode) cannot name a stored object, and as a label selector the API
 * server would refuse it with 400, which must not become our 500.
 */
const LABEL_VALUE = /^(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/;

/** Records a cache miss of a lookup by uuid, when inside withFreshReads. */
export function recordMiss(kind: MissedKind, uuid: string): void {
  if (uuid === '' || !LABEL_VALUE.test(uuid)) return;
  const seen = misses.getStore();
  if (seen && seen.size < MAX_MISSES) seen.set(`${kind}:${uuid}`, { kind, key: uuid });
}

/** Records a cache miss of a host lookup by Masakari name, when inside withFreshReads. */
export function recordHostNameMiss(name: string): void {
  const seen = misses.getStore();
  if (name !== '' && seen && seen.size < MAX_MISSES) seen.set(`hostName:${name}`, { kind: 'hostName', key: name });
}

const REFS = { segment: RESOURCES.segments, host: RESOURCES.hosts, notification: RESOURCES.notifications } as const;

/**
 * Runs attempt; if it fails with an error `retryable` accepts after lookups
 * missed the cache, reads the missed objects from the API server and, when
 * any was found, runs attempt once more. `retryable` must only accept errors
 * thrown before the attempt changed anything (a lookup that found nothing).
 */
export async function withFreshReads<T>(
  deps: FreshReadDeps,
  attempt: () => Promise<T>,
  retryable: (e: unknown) => boolean,
): Promise<T> {
  const seen = new Map<string, Miss>();
  try {
    return await misses.run(seen, attempt);
  } catch (e) {
    if (seen.size === 0 || !retryable(e)) throw e;
    if (!(await catchUp(deps, seen))) throw e;
    return attempt();
  }
}

/** Reads the missed objects from the API server into the caches; true when any was found. */
async function catchUp(deps: FreshReadDeps, seen: Map<string, Miss>): Promise<boolean> {
  const found = await Promise.all(
    [...seen.values()].map(({ kind, key }) =>
      kind === 'hostName' ? catchUpHostNamed(deps, key) : catchUpByUuid(deps, kind, key),
    ),
  );
  return found.some(Boolean);
}

interface FreshReadDeps {
  kube: KubeClient;
  namespace: string;
  caches: StoreCaches;
  sealedVisibility?: Pick<SealedVisibility, 'settle'>;
}

/**
 * The admitted objects labelled with this uuid, put into the cache; true when
 * any was. A sealed notification that another replica's intake has still to
 * confirm is decided first (admission/visibility.ts), so the retry can find it.
 */
async function catchUpByUuid(
  { kube, namespace, caches, sealedVisibility }: FreshReadDeps,
  kind: Exclude<MissedKind, 'hostName'>,
  uuid: string,
): Promise<boolean> {
  const cache = { segment: caches.segments, host: caches.hosts, notification: caches.notifications }[kind];
  const found = await readByUuidInto(
    kube,
    namespace,
    REFS[kind],
    uuid,
    cache as Pick<Informer<MasakariObject>, 'upsertLocal'>,
  );
  if (found && kind === 'notification' && sealedVisibility) {
    await Promise.all(caches.notifications.byIndex(INDEX.uuid, uuid).map((n) => sealedVisibility.settle(n)));
  }
  return found;
}

/**
 * Reads the admitted objects labelled with this uuid from the API server (not
 * a cache) into `cache`; true when any was found. A uuid that cannot be a
 * label value names nothing (and would be a 400 as a selector). Also the
 * engine's last look before a missing host or segment fails a notification
 * (src/engine/notification-processor.ts).
 */
export async function readByUuidInto<T extends MasakariObject>(
  kube: KubeClient,
  namespace: string,
  ref: ResourceRef,
  uuid: string,
  cache: Pick<Informer<T>, 'upsertLocal'>,
): Promise<boolean> {
  if (uuid === '' || !LABEL_VALUE.test(uuid)) return false;
  const list = await kube.list<T>(ref, namespace, { labelSelector: `${LABELS.uuid}=${uuid}`, limit: 2 });
  let found = false;
  for (const obj of list.items) {
    if (!isAdmitted(obj) || obj.metadata.deletionTimestamp) continue;
    cache.upsertLocal(withoutManagedFields(obj));
    found = true;
  }
  return found;
}

/** The host that holds this Masakari name (through its name claim), and its segment if not cached; true when found. */
async function catchUpHostNamed(deps: FreshReadDeps, name: string): Promise<boolean> {
  const { kube, namespace, caches } = deps;
  const claim = await getIfExists<ConfigMap>(kube, RESOURCES.configMaps, namespace, claimObjectName('host', name));
  const ownerName = claim?.data?.ownerName;
  if (claim?.data?.name !== name || !ownerName) return false;
  const host = await getIfExists<HaHost>(kube, RESOURCES.hosts, namespace, ownerName);
  if (!host || host.spec.name !== name || !isAdmitted(host) || host.metadata.deletionTimestamp) return false;
  const segmentUuid = host.status?.segmentUuid;
  if (segmentUuid && !caches.segments.byIndex(INDEX.uuid, segmentUuid).some(isAdmitted)) {
    await catchUpByUuid(deps, 'segment', segmentUuid);
  }
  caches.hosts.upsertLocal(withoutManagedFields(host));
  return true;
}

function withoutManagedFields<T extends MasakariObject>(obj: T): T {
  const { managedFields: _dropped, ...metadata } = obj.metadata;
  return { ...obj, metadata };
}
