// Masakari integer ids (the `id` field, pagination markers) without SQL
// auto-increment.
//
// One sequence ConfigMap per kind (`masakari-ids-<kind>`, data.next = the next
// unreserved id) is advanced with a resourceVersion compare-and-swap. Each
// process reserves a BLOCK of ids at a time, so the shared object is written
// once per block instead of once per create. Guarantees: ids are unique per
// kind and never reused (a block lost in a crash leaves a gap, never a
// repeat); they increase within one process but not across processes, which
// Masakari does not need: lists sort by created_at, then id.
import type { KubeClient } from '../k8s/client.ts';
import { isAlreadyExists, isNotFound } from '../k8s/client.ts';
import { CONFLICT_BACKOFF, lostRace, retryOnConflictOr } from '../k8s/retry-on-conflict.ts';
import { RESOURCES } from '../k8s/resources.ts';
import { FIELD_MANAGERS, LABELS, MANAGED_BY } from '../model/constants.ts';
import type { ConfigMap } from './configmap.ts';
import { ROLES } from './configmap.ts';
import type { IdKind } from './names.ts';
import { sequenceObjectName } from './names.ts';

export const DEFAULT_ID_BLOCK_SIZE = 20;

export interface IdAllocator {
  /** The next id of this process's block, reserving a new block when it is used up. */
  next(): Promise<number>;
  /** The sequence's next unreserved id (read from the API server): every id ever handed out is below it. */
  highWaterMark(): Promise<number>;
  /**
   * Reserves this process's first block in the background, so its first
   * create does not wait for the sequence write either (the api warms its
   * notification ids when it starts: the first notification after a restart
   * often comes with a failure). A failed reservation is left to next().
   */
  warm(): void;
}

export class IdAllocationError extends Error {}

export function createIdAllocator(
  kube: KubeClient,
  namespace: string,
  kind: IdKind,
  blockSize: number = DEFAULT_ID_BLOCK_SIZE,
): IdAllocator {
  if (!Number.isInteger(blockSize) || blockSize < 1)
    throw new IdAllocationError(`id block size must be >= 1, got ${blockSize}`);
  let nextId = 0;
  let end = 0; // exclusive
  // One reservation at a time per process: concurrent callers share it instead of racing each other.
  let chain: Promise<unknown> = Promise.resolve();

  /** Reserves the next block in the shared sequence; returns [first id, end (exclusive)]. */
  const reserveBlock = (): Promise<[number, number]> =>
    advanceSequence(kube, namespace, kind, `reserve ${kind} ids`, (mark) => ({
      take: [mark, mark + blockSize] as [number, number],
      next: mark + blockSize,
    }));

  // The next block is reserved in the background once a quarter of the
  // current one is left, so creates almost never wait for the sequence write
  // (it used to add one API round trip to every blockSize-th create: the p99).
  let prefetch: Promise<[number, number]> | undefined;
  function maybePrefetch(): void {
    if (prefetch || end - nextId > Math.ceil(blockSize / 4)) return;
    const p = reserveBlock();
    prefetch = p;
    p.catch(() => {
      if (prefetch === p) prefetch = undefined; // next() reserves in the foreground instead
    });
  }

  async function takeBlock(): Promise<void> {
    const p = prefetch;
    prefetch = undefined;
    let block: [number, number];
    try {
      block = await (p ?? reserveBlock());
    } catch (e) {
      if (!p) throw e;
      block = await reserveBlock(); // the background reservation failed: try once more, now
    }
    [nextId, end] = block;
  }

  function next(): Promise<number> {
    const result = chain.then(async () => {
      if (nextId === 0 || nextId >= end) await takeBlock();
      const id = nextId++;
      maybePrefetch();
      return id;
    });
    chain = result.catch(() => undefined);
    return result;
  }

  async function highWaterMark(): Promise<number> {
    return markOf(await readSequence(kube, namespace, kind), namespace, kind);
  }

  function warm(): void {
    if (nextId === 0) maybePrefetch();
  }

  return { next, highWaterMark, warm };
}

/**
 * For `masakari-operator import` (src/store/import.ts): takes `wanted` (an id
 * the object already had in Masakari) if the sequence never handed it out,
 * i.e. it is at or above the high-water mark, and moves the mark past it;
 * otherwise (or with no `wanted`) takes the sequence's next id. One
 * compare-and-swap, so a running API replica reserving a block at the same
 * moment can never get the same id. Callers import in ascending id order, so
 * raising the mark for one id does not disqualify the next. Ids skipped over
 * become a gap, which the sequence allows (ids are never reused, not dense).
 */
export function reserveImportedId(
  kube: KubeClient,
  namespace: string,
  kind: IdKind,
  wanted: number | undefined,
): Promise<{ id: number; preserved: boolean }> {
  return advanceSequence(kube, namespace, kind, `reserve a ${kind} id`, (mark) => {
    const preserved = wanted !== undefined && Number.isSafeInteger(wanted) && wanted >= mark;
    const id = preserved ? wanted : mark;
    return { take: { id, preserved }, next: id + 1 };
  });
}

/** The sequence ConfigMap of a kind, or undefined before its first id. */
async function readSequence(kube: KubeClient, namespace: string, kind: IdKind): Promise<ConfigMap | undefined> {
  try {
    return await kube.get<ConfigMap>(RESOURCES.configMaps, namespace, sequenceObjectName(kind));
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
}

/** The next id the sequence has not handed out (1 before the first). */
function markOf(cm: ConfigMap | undefined, namespace: string, kind: IdKind): number {
  if (!cm) return 1;
  const value = Number(cm.data?.next);
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new IdAllocationError(
      `ConfigMap ${namespace}/${sequenceObjectName(kind)} has an invalid data.next ${JSON.stringify(cm.data?.next)}`,
    );
  }
  return value;
}

/**
 * The one way the sequence moves: read it, let `decide` pick what to take
 * from the current mark and the new mark, and write that with a
 * compare-and-swap (replace with the read resourceVersion, or create when
 * there is none yet). A 409 means another process moved it first: read again.
 */
async function advanceSequence<T>(
  kube: KubeClient,
  namespace: string,
  kind: IdKind,
  /** For the error after too many conflicts, e.g. "reserve hosts ids". */
  what: string,
  decide: (mark: number) => { take: T; next: number },
): Promise<T> {
  const name = sequenceObjectName(kind);
  return retryOnConflictOr(
    CONFLICT_BACKOFF,
    async () => {
      const cm = await readSequence(kube, namespace, kind);
      const { take, next } = decide(markOf(cm, namespace, kind));
      const data = { ...cm?.data, kind, next: String(next) };
      try {
        if (cm) {
          await kube.replace(
            RESOURCES.configMaps,
            namespace,
            name,
            { ...cm, data },
            { fieldManager: FIELD_MANAGERS.api },
          );
        } else {
          const fresh: ConfigMap = {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name, labels: { [LABELS.role]: ROLES.idSequence, [LABELS.managedBy]: MANAGED_BY } },
            data,
          };
          await kube.create(RESOURCES.configMaps, namespace, fresh, { fieldManager: FIELD_MANAGERS.api });
        }
      } catch (e) {
        if (isAlreadyExists(e)) throw lostRace(`${name}: another process created it first`);
        throw e;
      }
      return take;
    },
    () =>
      new IdAllocationError(
        `could not ${what}: ${CONFLICT_BACKOFF.steps} conflicting updates of ConfigMap ${namespace}/${name}`,
      ),
  );
}
