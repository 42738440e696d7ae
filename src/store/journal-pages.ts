// A Notification's recovery history that does not fit its status: "journal
// pages", small ConfigMaps owned by the Notification.
//
// etcd refuses objects over about 1.5 MiB, and every status write stores the
// whole object again (etcd keeps each revision until compaction, and every
// watcher receives it). A host with a thousand VMs carries about a megabyte
// of vmoves, progress lines and per-server side-effect records, so the
// engine keeps a Notification's status under a byte budget and moves the
// overflow into pages (src/engine/status/writer.ts decides when):
//
// - A page is written once and never rewritten. It holds settled items:
//   vmoves (by uuid), effect records (by key) and the oldest progress lines
//   of task entries (by task name and run).
// - The status stays the newest word: a vmove or effect record in the status
//   overrides the copy in any page, and a later page overrides an earlier one.
//   Progress lines of an entry are the page lines (in page order) followed by
//   the status lines.
// - status.engine.journalPages says how many pages count (seq 0..n-1). A page
//   is created before the status write that counts it, so a page whose seq is
//   not counted (its status write failed) is ignored and overwritten later.
//
// Masakari keeps the same data in SQL rows (vmoves table, notification
// progress details); `assembleStatus` puts the pieces back together for the
// REST answers (progress details in GET /v1/notifications/{id}, vmoves in
// GET /v1/notifications/{id}/vmoves) and for a resuming engine.

import type { KubeClient } from '../k8s/client.ts';
import { isNotFound } from '../k8s/client.ts';
import { listAllPages } from '../k8s/list-pages.ts';
import { RESOURCES } from '../k8s/resources.ts';
import { API_VERSION, KINDS, LABELS, MANAGED_BY } from '../model/constants.ts';
import type { Notification, NotificationStatusBlock, ProgressDetail, VMoveRecord } from '../model/types.ts';
import type { ConfigMap } from './configmap.ts';
import { ROLES } from './configmap.ts';

/** Pages per LIST request: a page may be a few hundred KiB, so a list answer stays a few MiB. */
const LIST_PAGE_SIZE = 16;

/** ConfigMap data key holding a page's JSON. */
export const PAGE_KEY = 'page';

/** Progress lines of one task entry moved into a page. */
export interface PageLines {
  name: string;
  run: number;
  details: ProgressDetail[];
}

export interface JournalPage {
  seq: number;
  vmoves?: VMoveRecord[];
  /** Effect records of status.engine.effects, opaque here. */
  effects?: Record<string, unknown>;
  lines?: PageLines[];
}

export function journalPageName(notificationUuid: string, seq: number): string {
  return `journal-${notificationUuid}-${seq}`;
}

/** The uuid of a Notification, from status or label (both set at admission). */
export function notificationUuidOf(n: Notification): string {
  return n.status?.uuid ?? n.metadata.labels?.[LABELS.uuid] ?? '';
}

/** How many pages status counts (status.engine.journalPages). */
export function countedPages(status: NotificationStatusBlock | undefined): number {
  const v = (status?.engine as { journalPages?: unknown } | undefined)?.journalPages;
  return typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : 0;
}

/**
 * A status without its history (workflow details, vmoves, the engine's
 * bookkeeping: most of a finished notification's bytes) but for the journal
 * page count, which tells a delete whether pages go with it. What the
 * store's cache (slim-notification.ts) and a purge's list read keep.
 */
export function statusWithoutHistory(status: NotificationStatusBlock): NotificationStatusBlock {
  const { recoveryWorkflowDetails: _details, vmoves: _vmoves, engine: _engine, ...rest } = status;
  const pages = countedPages(status);
  return pages > 0 ? { ...rest, engine: { journalPages: pages } } : rest;
}

export function pageSelector(notificationUuid?: string): string {
  const role = `${LABELS.role}=${ROLES.journalPage}`;
  return notificationUuid ? `${role},${LABELS.notificationUuid}=${notificationUuid}` : role;
}

export function pageObject(n: Notification, page: JournalPage): ConfigMap {
  const uuid = notificationUuidOf(n);
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: journalPageName(uuid, page.seq),
      labels: {
        [LABELS.role]: ROLES.journalPage,
        [LABELS.notificationUuid]: uuid,
        [LABELS.managedBy]: MANAGED_BY,
      },
      // A real cluster's garbage collector removes pages with their Notification;
      // without one (tests, or a page left by a crash) the store's sweep does (sweepOrphanPages).
      ownerReferences: n.metadata.uid
        ? [{ apiVersion: API_VERSION, kind: KINDS.notification.kind, name: n.metadata.name ?? '', uid: n.metadata.uid }]
        : [],
    },
    data: { [PAGE_KEY]: JSON.stringify(page) },
  };
}

const parsed = new WeakMap<ConfigMap, JournalPage | null>();

/** The page a ConfigMap holds, or undefined when it holds none (or garbage); parsed once per cached object. */
export function pageOf(cm: ConfigMap): JournalPage | undefined {
  let p = parsed.get(cm);
  if (p === undefined) {
    p = parsePage(cm) ?? null;
    parsed.set(cm, p);
  }
  return p ?? undefined;
}

function parsePage(cm: ConfigMap): JournalPage | undefined {
  const raw = cm.data?.[PAGE_KEY];
  if (!raw) return undefined;
  try {
    const p = JSON.parse(raw) as JournalPage;
    return typeof p === 'object' && p !== null && Number.isInteger(p.seq) ? p : undefined;
  } catch {
    return undefined;
  }
}

const entryKey = (name: string, run: number | undefined): string => `${run ?? 0}\u0000${name}`;

/**
 * The whole status: what the counted pages hold, overridden by what the
 * status holds. Returns the status itself (same object) when no page counts.
 */
export function assembleStatus(
  status: NotificationStatusBlock | undefined,
  pages: readonly JournalPage[],
): NotificationStatusBlock | undefined {
  const counted = countedPages(status);
  if (!status || counted === 0) return status;
  const used = pages.filter((p) => p.seq < counted).sort((a, b) => a.seq - b.seq);

  const vmoves: VMoveRecord[] = [];
  const at = new Map<string, number>();
  const put = (v: VMoveRecord) => {
    const i = at.get(v.uuid);
    if (i === undefined) {
      at.set(v.uuid, vmoves.length);
      vmoves.push(v);
    } else vmoves[i] = v;
  };
  const effects: Record<string, unknown> = {};
  const lines = new Map<string, ProgressDetail[]>();
  for (const p of used) {
    for (const v of p.vmoves ?? []) put(v);
    Object.assign(effects, p.effects ?? {});
    for (const l of p.lines ?? []) {
      const k = entryKey(l.name, l.run);
      lines.set(k, [...(lines.get(k) ?? []), ...l.details]);
    }
  }
  for (const v of status.vmoves ?? []) put(v);
  const engine = { ...(status.engine ?? {}) };
  Object.assign(effects, (engine as { effects?: Record<string, unknown> }).effects ?? {});
  engine.effects = effects;
  const details = (status.recoveryWorkflowDetails ?? []).map((e) => {
    const before = lines.get(entryKey(e.name, e.run));
    return before ? { ...e, progressDetails: [...before, ...e.progressDetails] } : e;
  });
  return {
    ...status,
    ...(vmoves.length > 0 || status.vmoves ? { vmoves } : {}),
    ...(status.recoveryWorkflowDetails ? { recoveryWorkflowDetails: details } : {}),
    engine,
  };
}

/** The Notification with its assembled status (the object itself when it has no pages). */
export function assembleNotification(n: Notification, pages: readonly JournalPage[]): Notification {
  const status = assembleStatus(n.status, pages);
  return status === n.status ? n : { ...n, status };
}

/** The ConfigMaps of one notification's pages, from the API server (paged list). */
async function listPageObjects(kube: KubeClient, namespace: string, notificationUuid: string): Promise<ConfigMap[]> {
  const list = await listAllPages<ConfigMap>(
    kube,
    RESOURCES.configMaps,
    namespace,
    { labelSelector: pageSelector(notificationUuid) },
    LIST_PAGE_SIZE,
  );
  return list.items;
}

/** Every page of one notification, from the API server (paged list). */
export async function readPages(kube: KubeClient, namespace: string, notificationUuid: string): Promise<JournalPage[]> {
  const items = await listPageObjects(kube, namespace, notificationUuid);
  return items.map(pageOf).filter((p): p is JournalPage => p !== undefined);
}

/** Deletes every page of one notification (its deletion, or retention). Returns how many. */
export async function deletePages(kube: KubeClient, namespace: string, notificationUuid: string): Promise<number> {
  const items = await listPageObjects(kube, namespace, notificationUuid);
  let n = 0;
  for (const cm of items) {
    try {
      await kube.delete(RESOURCES.configMaps, namespace, cm.metadata.name ?? '');
      n++;
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
  return n;
}

/**
 * Deletes pages whose Notification no longer exists: the cluster may have no
 * garbage collector, and a Notification deleted with kubectl or by retention
 * leaves its pages behind. `known(uuid)` says whether the notification
 * exists; pages younger than graceMs are left alone (their notification may
 * not have reached the caller's cache yet).
 */
export async function sweepOrphanPages(
  kube: KubeClient,
  namespace: string,
  known: (notificationUuid: string) => boolean,
  now: Date,
  graceMs: number,
): Promise<number> {
  const { items } = await listAllPages<ConfigMap>(
    kube,
    RESOURCES.configMaps,
    namespace,
    { labelSelector: pageSelector() },
    LIST_PAGE_SIZE,
  );
  let n = 0;
  for (const cm of items) {
    const uuid = cm.metadata.labels?.[LABELS.notificationUuid];
    if (!uuid || known(uuid)) continue;
    const created = Date.parse(cm.metadata.creationTimestamp ?? '');
    if (!Number.isNaN(created) && now.getTime() - created < graceMs) continue;
    try {
      await kube.delete(RESOURCES.configMaps, namespace, cm.metadata.name ?? '', {
        ...(cm.metadata.uid ? { preconditionUid: cm.metadata.uid } : {}),
      });
      n++;
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
  return n;
}
