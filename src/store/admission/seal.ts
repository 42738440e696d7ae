// Admission of a REST-created Notification without a status write.
//
// Why: a notification used to take three writes at intake (its duplicate
// claim, the Notification, then the status that admits it). The status write
// was the dearest of the three in kube-apiserver's CPU, and without it the
// facade takes notifications markedly faster (docs/benchmarks.md, "Storm").
//
// Why status was the trust anchor: a kubectl author may create a
// Notification but may not write notifications/status, so "status carries
// the uuid and id" proved that the operator's admission rules (host exists,
// not on maintenance, not a duplicate, a fresh id) had passed
// (src/domain/admitted.ts). The seal keeps that proof without the write: the
// REST path puts an HMAC-SHA256, under a key only the operator reads (the
// Secret SEAL_SECRET_NAME), of the object's name, identity labels (uuid, id,
// source host and segment uuids) and spec into the annotation
// ANNOTATIONS.admissionSeal. Whoever cannot read the key cannot make a seal,
// and a seal is valid for exactly that name, identity and spec, so copying
// it onto another object admits nothing.
//
// How the rest of the operator sees it: withSealedNotifications wraps the
// KubeClient, so every Notification read from the API server (get, list,
// watch, and the answers of writes) that is sealed, valid and not yet
// admitted in status is shown with the status the admission write would have
// written (admissionStatus, timed at its creation), marked admittedBySeal.
// Readers need nothing else. The one patch that diffs against the stored
// status (the engine's statusPatch, src/engine/status/patch.ts, behind both
// of its writers) asks statusAsStored, so the engine's first write stores the
// whole status, identity included: from then on the status is the proof, as
// before.
//
// No key (the operator may not read or create the Secret, e.g. an older
// chart's Role): the REST path admits with the status write, as before, and
// sealed objects are admitted by the kubectl-path reconciler from their
// labels after its grace period.
import { createHmac, createSecretKey, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Logger } from 'pino';
import type {
  JsonPatchOp,
  KubeClient,
  KubeList,
  ListOptions,
  ResourceRef,
  WatchEvent,
  WatchOptions,
  WriteOptions,
} from '../../k8s/client.ts';
import { isAlreadyExists, isTransient, KubeError } from '../../k8s/client.ts';
import { getIfExists } from '../../k8s/get-if-exists.ts';
import { BackoffManager, sleepUnlessAborted } from '../../runtime/backoff.ts';
import { RESOURCES } from '../../k8s/resources.ts';
import { ANNOTATIONS, LABELS, MANAGED_BY } from '../../model/constants.ts';
import type { Notification, NotificationStatusBlock } from '../../model/types.ts';
import { admissionStatus } from './status.ts';
import { canonicalJson } from './fingerprints.ts';

/**
 * The Secret holding the admission key, in [operator] admission_key_namespace (default: the store's namespace);
 * created by the first process that needs it.
 */
export const SEAL_SECRET_NAME = 'masakari-admission-seal';
const KEY_FIELD = 'key';
const KEY_BYTES = 32;
const VERSION = 'v2';
/**
 * The seal binds the second it was made in, which the API server's
 * creationTimestamp of the same create must follow closely: a copy of the
 * object created again later (saved with `kubectl get -o yaml`, purged,
 * applied again; a GitOps tool re-creating what was pruned; a restore) has a
 * new creation time, so its seal admits nothing and it goes through the
 * kubectl-path intake. The second is not stored, so the annotation is no
 * longer than before: verify tries the creation's second and the
 * SEAL_WINDOW_BEFORE_S before it (the create's latency, and the operator's
 * clock behind the API server's) and SEAL_WINDOW_AFTER_S after it (the
 * operator's clock ahead). A create outside the window is not lost: the
 * kubectl-path reconciler admits it from its labels after its grace, by the
 * same rules.
 */
export const SEAL_WINDOW_BEFORE_S = 10;
export const SEAL_WINDOW_AFTER_S = 2;
const secondOf = (ms: number): number => Math.floor(ms / 1000);
/** The seconds a valid seal of an object created at `created` may name, likeliest first. */
function sealSeconds(created: number): number[] {
  const second = secondOf(created);
  const tried: number[] = [];
  for (let back = 0; back <= SEAL_WINDOW_BEFORE_S; back++) tried.push(second - back);
  for (let ahead = 1; ahead <= SEAL_WINDOW_AFTER_S; ahead++) tried.push(second + ahead);
  return tried;
}

/** What a valid seal vouches for. */
export interface SealedIdentity {
  uuid: string;
  id: number;
  sourceHostUuid: string;
  failoverSegmentUuid: string;
}

export interface AdmissionSeal {
  /** The annotation value for a Notification about to be created at `sealedAt` (name, identity labels and spec set). */
  seal(n: Notification, sealedAt: Date): string;
  /**
   * The identity a valid seal vouches for; undefined when unsealed, tampered
   * with, sealed under another key, or created outside the seal's window
   * (SEAL_WINDOW_BEFORE_S, SEAL_WINDOW_AFTER_S): a re-created copy.
   */
  verify(n: Notification): SealedIdentity | undefined;
}

/** The sealed text: every field the seal vouches for, in a fixed order. */
function sealedText(n: Notification, second: number): string {
  const labels = n.metadata.labels ?? {};
  return canonicalJson([
    VERSION,
    second,
    n.metadata.name ?? '',
    labels[LABELS.uuid] ?? '',
    labels[LABELS.id] ?? '',
    labels[LABELS.hostUuid] ?? '',
    labels[LABELS.segmentUuid] ?? '',
    n.spec?.type ?? '',
    n.spec?.hostname ?? '',
    n.spec?.generatedTime ?? '',
    n.spec?.payload ?? {},
  ]);
}

export function createAdmissionSeal(key: Buffer): AdmissionSeal {
  if (key.length < KEY_BYTES) throw new Error(`admission seal key must be at least ${KEY_BYTES} bytes`);
  // One KeyObject for every MAC: given the raw Buffer, createHmac imports the key again on each call,
  // which costs several times the MAC itself, and every intake and every cached view pays it.
  const keyObject = createSecretKey(key);
  const mac = (n: Notification, second: number): Buffer =>
    createHmac('sha256', keyObject).update(sealedText(n, second)).digest();
  const matches = (given: Buffer, n: Notification, second: number): boolean => {
    const expected = mac(n, second);
    return given.length === expected.length && timingSafeEqual(given, expected);
  };
  return {
    seal: (n, sealedAt) => `${VERSION}.${mac(n, secondOf(sealedAt.getTime())).toString('base64url')}`,
    verify(n) {
      const value = n.metadata.annotations?.[ANNOTATIONS.admissionSeal];
      if (!value?.startsWith(`${VERSION}.`)) return undefined;
      const created = Date.parse(n.metadata.creationTimestamp ?? '');
      if (Number.isNaN(created)) return undefined;
      const given = Buffer.from(value.slice(VERSION.length + 1), 'base64url');
      // A valid seal matches at the first or second try; only a copy or a forgery pays for the whole window.
      if (!sealSeconds(created).some((second) => matches(given, n, second))) return undefined;
      const labels = n.metadata.labels ?? {};
      const id = Number(labels[LABELS.id]);
      const uuid = labels[LABELS.uuid];
      const sourceHostUuid = labels[LABELS.hostUuid];
      const failoverSegmentUuid = labels[LABELS.segmentUuid];
      if (!Number.isSafeInteger(id) || !uuid || !sourceHostUuid || failoverSegmentUuid === undefined) return undefined;
      return { uuid, id, sourceHostUuid, failoverSegmentUuid };
    },
  };
}

/**
 * The Notification as readers see it: unchanged unless it is sealed, valid
 * and its status does not name it yet; then with the status the admission
 * write would have stored (timed at its creation, so every process shows the
 * same), marked admittedBySeal.
 */
export function sealedView(n: Notification, seal: AdmissionSeal): Notification {
  if (n.status?.uuid !== undefined || n.metadata.deletionTimestamp) return n;
  if (n.metadata.annotations?.[ANNOTATIONS.admissionSeal] === undefined) return n;
  const identity = seal.verify(n);
  if (!identity) return n;
  const created = n.metadata.creationTimestamp ? new Date(n.metadata.creationTimestamp) : new Date(0);
  const status = admissionStatus(n, { ...identity, phase: n.status?.phase ?? 'new' }, created);
  return { ...n, status: { ...n.status, ...status, admittedBySeal: true } as NotificationStatusBlock };
}

/** The status the API server holds, given the one a reader sees (undefined for a seal's view, which is only shown). */
export function statusAsStored(status: NotificationStatusBlock | undefined): NotificationStatusBlock | undefined {
  return status?.admittedBySeal ? undefined : status;
}

/** `status` without the seal view's marker, for writing. */
export function withoutSealMarker(status: NotificationStatusBlock): NotificationStatusBlock {
  if (!status.admittedBySeal) return status;
  const { admittedBySeal: _marker, ...rest } = status;
  return rest;
}

const isNotificationRef = (ref: ResourceRef): boolean =>
  ref.plural === RESOURCES.notifications.plural && ref.group === RESOURCES.notifications.group;

/**
 * `kube` with every Notification of `namespace` it returns passed through
 * sealedView: the one place sealed notifications become admitted for every
 * reader of the process (caches, fresh reads, the engine, the reconcilers).
 * The key is that namespace's: another namespace's operator seals with its own.
 */
export function withSealedNotifications(kube: KubeClient, seal: AdmissionSeal, namespace: string): KubeClient {
  const view = (n: Notification): Notification => (n.metadata?.namespace === namespace ? sealedView(n, seal) : n);
  const one = <T>(ref: ResourceRef, obj: T): T =>
    isNotificationRef(ref) && obj ? (view(obj as unknown as Notification) as unknown as T) : obj;
  const many = <T>(ref: ResourceRef, list: KubeList<T>): KubeList<T> =>
    isNotificationRef(ref) ? { ...list, items: list.items.map((i) => one(ref, i)) } : list;
  const wrapped: KubeClient = {
    get: async <T>(ref: ResourceRef, ns: string | undefined, name: string) =>
      one(ref, await kube.get<T>(ref, ns, name)),
    list: async <T>(ref: ResourceRef, ns: string | undefined, opts?: ListOptions) =>
      many(ref, await kube.list<T>(ref, ns, opts)),
    create: async <T>(ref: ResourceRef, ns: string | undefined, body: T, opts?: WriteOptions) =>
      one(ref, await kube.create<T>(ref, ns, body, opts)),
    replace: async <T>(ref: ResourceRef, ns: string | undefined, name: string, body: T, opts?: WriteOptions) =>
      one(ref, await kube.replace<T>(ref, ns, name, body, opts)),
    replaceStatus: async <T>(ref: ResourceRef, ns: string | undefined, name: string, body: T, opts?: WriteOptions) =>
      one(ref, await kube.replaceStatus<T>(ref, ns, name, body, opts)),
    mergePatch: async <T>(
      ref: ResourceRef,
      ns: string | undefined,
      name: string,
      patch: unknown,
      opts?: WriteOptions & { status?: boolean },
    ) => one(ref, await kube.mergePatch<T>(ref, ns, name, patch, opts)),
    jsonPatch: async <T>(
      ref: ResourceRef,
      ns: string | undefined,
      name: string,
      ops: JsonPatchOp[],
      opts?: WriteOptions & { status?: boolean },
    ) => one(ref, await kube.jsonPatch<T>(ref, ns, name, ops, opts)),
    apply: async <T>(
      ref: ResourceRef,
      ns: string | undefined,
      name: string,
      body: unknown,
      opts: WriteOptions & { force?: boolean; status?: boolean },
    ) => one(ref, await kube.apply<T>(ref, ns, name, body, opts)),
    delete: (ref, ns, name, opts) => kube.delete(ref, ns, name, opts),
    watch: <T>(
      ref: ResourceRef,
      ns: string | undefined,
      opts: WatchOptions,
      onEvent: (e: WatchEvent<T>) => void,
      signal: AbortSignal,
    ) =>
      kube.watch<T>(
        ref,
        ns,
        opts,
        isNotificationRef(ref) ? (e) => onEvent({ ...e, object: one(ref, e.object) }) : onEvent,
        signal,
      ),
  };
  const listKept = kube.listKept?.bind(kube);
  if (listKept) {
    wrapped.listKept = <T, U>(
      ref: ResourceRef,
      ns: string | undefined,
      opts: ListOptions,
      keep: (item: T) => U | undefined,
    ) => listKept<T, U>(ref, ns, opts, isNotificationRef(ref) ? (item) => keep(one(ref, item)) : keep);
  }
  return wrapped;
}

interface Secret {
  apiVersion: 'v1';
  kind: 'Secret';
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  type?: string;
  data?: Record<string, string>;
}

const keyOf = (s: Secret): Buffer | undefined => {
  const data = s.data?.[KEY_FIELD];
  const key = data ? Buffer.from(data, 'base64') : undefined;
  return key && key.length >= KEY_BYTES ? key : undefined;
};

/** Longest wait between attempts of loadAdmissionSealKey while the API server fails. */
const KEY_LOAD_MAX_BACKOFF_MS = 10_000;

/**
 * The admission key: read from SEAL_SECRET_NAME in `namespace` (the key
 * namespace, which may differ from the objects'), or created there (random;
 * create-if-absent, so concurrent first starts agree on one key). A Secret
 * found there is trusted: who may write it may also change the operator's own
 * Deployment when it lives in the operator's namespace, which is the point of
 * admission_key_namespace (docs/operations.md "The admission key"). Undefined
 * when this process may not read or create it (403): the REST path then
 * admits with a status write, as before. Transient API failures (no answer,
 * 429, 5xx) are retried, backing off from 500 ms to KEY_LOAD_MAX_BACKOFF_MS and
 * logged, until `signal` aborts (start-up waits as for its first cache sync);
 * any other failure is thrown: the process does not start.
 */
export async function loadAdmissionSealKey(
  kube: KubeClient,
  namespace: string,
  log: Logger,
  signal: AbortSignal,
): Promise<Buffer | undefined> {
  const backoff = new BackoffManager({
    steps: Infinity,
    delayMs: 500,
    factor: 2,
    jitter: 0,
    capMs: KEY_LOAD_MAX_BACKOFF_MS,
  });
  for (;;) {
    try {
      return await readOrCreateKey(kube, namespace);
    } catch (e) {
      if (e instanceof KubeError && e.code === 403) {
        log.warn(
          { err: e, secret: SEAL_SECRET_NAME },
          'may not read or create the admission key Secret: this process seals no notification (the REST path ' +
            'admits with a status write) and sees sealed ones as not admitted; every process needs the same access',
        );
        return undefined;
      }
      if (!isTransient(e) || signal.aborted) throw e;
      const waitMs = backoff.next();
      log.warn(
        { err: e, attempt: backoff.attempts, retry_in_ms: waitMs },
        'could not load the admission key; retrying',
      );
      await sleepUnlessAborted(waitMs, signal);
    }
  }
}

async function readOrCreateKey(kube: KubeClient, namespace: string): Promise<Buffer> {
  for (let round = 0; round < 3; round++) {
    const stored = await getIfExists<Secret>(kube, RESOURCES.secrets, namespace, SEAL_SECRET_NAME);
    if (stored) {
      const found = keyOf(stored);
      if (found) return found;
      throw new Error(`Secret ${namespace}/${SEAL_SECRET_NAME} has no ${KEY_BYTES}-byte data.${KEY_FIELD}`);
    }
    try {
      const created = await kube.create<Secret>(RESOURCES.secrets, namespace, {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: SEAL_SECRET_NAME, namespace, labels: { [LABELS.managedBy]: MANAGED_BY } },
        type: 'Opaque',
        data: { [KEY_FIELD]: randomBytes(KEY_BYTES).toString('base64') },
      });
      const key = keyOf(created);
      if (key) return key;
    } catch (e) {
      if (!isAlreadyExists(e)) throw e;
    }
  }
  throw new Error(`Secret ${namespace}/${SEAL_SECRET_NAME}: created and deleted again while starting`);
}
