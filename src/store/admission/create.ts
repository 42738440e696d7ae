// Admission: how a FailoverSegment, HaHost or Notification becomes visible to
// the Masakari API. An object is admitted once its status carries the Masakari
// uuid and id with Ready=True; until then every read skips it. Three writers
// admit objects and all use this module:
//
//   - the REST path (src/store/spec-writes.ts for segments and hosts;
//     src/store/admission/duplicate-claim.ts with seal.ts for notifications), which
//     creates the object and admits it at once;
//   - `masakari-operator import` (src/store/import.ts), which does the same
//     with the uuid and, when free, the id of a running Masakari's object;
//   - the kubectl/GitOps path (src/reconcilers/), which admits an object
//     someone else created, with admissionStatus and writeStatus.
//
// The create protocol (createAdmitted): take the Masakari name claim before
// the object exists (a refused name consumes no id), take an id, create the
// object, then write its status with a
// resourceVersion compare-and-swap. A late status write never lands on top
// of an admission someone else finished (the reconciler after its grace
// period, and the engine perhaps after it). What a failure leaves is the
// caller's choice: the REST path rolls the create back (the client saw an
// error and must not find the object later); the import and the notification
// intake leave it, and the reconciler (or a re-run) admits it from its labels.
import type { Logger } from 'pino';
import type { KubeClient, ResourceRef } from '../../k8s/client.ts';
import { isAlreadyExists } from '../../k8s/client.ts';
import type { FailoverSegment, HaHost } from '../../model/types.ts';
import type { StoreCaches } from '../caches.ts';
import type { NameClaims } from '../claims.ts';
import type { IdAllocator } from '../ids.ts';
import type { Lifecycle } from '../lifecycle.ts';
import type { AdmissionWriter } from './status.ts';
import { admitCreated } from './status.ts';
import type { ClaimKind } from '../names.ts';
import type { AdmissionSeal } from './seal.ts';
import type { SealedVisibility } from './visibility.ts';

/** What every writer of the store holds: the API, the caches, the name claims, the finalizer lifecycle, the ids. */
export interface StoreDeps {
  kube: KubeClient;
  namespace: string;
  log: Logger;
  caches: StoreCaches;
  claims: NameClaims;
  lifecycle: Lifecycle;
  ids: { segments: IdAllocator; hosts: IdAllocator; notifications: IdAllocator };
  /** Seals REST-created notifications so they need no admission write (seal.ts); none: the status write. */
  seal?: AdmissionSeal;
  /** Hides sealed notifications their claim is still deciding (visibility.ts); none: nothing is. */
  sealedVisibility?: SealedVisibility;
}

/** What createAdmitted creates: a FailoverSegment or HaHost under a claimed Masakari name. */
export interface AdmissionPlan<T extends FailoverSegment | HaHost> {
  ref: ResourceRef;
  kind: ClaimKind;
  /** The Masakari name the claim is taken for. */
  masakariName: string;
  /** metadata.name and uuid to try in turn; the next one when the name is taken by another object. */
  candidates: ReadonlyArray<{ name: string; uuid: string }>;
  /**
   * Does an object with this metadata.name exist? A claim held in that name
   * would look like ours, so the candidate is skipped without touching it.
   */
  nameInUse: (name: string) => boolean | Promise<boolean>;
  /** Checks before an id is taken (the import's server-side dry run), so a refused create consumes none. */
  preflight?: (candidate: { name: string; uuid: string }) => Promise<void>;
  /** The next id (after the claim: a create refused for its name must not consume one, as in Masakari). */
  takeId: () => Promise<number>;
  body: (candidate: { name: string; uuid: string }, id: number) => T;
  /** Status fields besides uuid and id (host flags, updatedAt). */
  status?: (created: T) => Record<string, unknown>;
  /**
   * Binds the claim to the new object's uid at once (the import: the operator
   * may not be running). The REST path leaves it to the reconciler, which
   * binds every claim it confirms, so a create costs no extra round trips.
   */
  bindClaim: boolean;
  /** Undoes the create when its status cannot be written; without it the object waits for the reconciler. */
  rollback?: (created: T) => Promise<void>;
  /** The error to throw when the status write failed (after any rollback); default the write's own. */
  statusFailed?: (e: unknown, created: T) => unknown;
}

export interface Admitted<T> {
  object: T;
  id: number;
  uuid: string;
}

/** No candidate metadata.name was free. */
export class NoFreeNameError extends Error {}

/** The protocol in the header: claim, id, create, bind, admit (or roll back). */
export async function createAdmitted<T extends FailoverSegment | HaHost>(
  w: AdmissionWriter & { claims: NameClaims },
  plan: AdmissionPlan<T>,
): Promise<Admitted<T>> {
  for (const candidate of plan.candidates) {
    if (await plan.nameInUse(candidate.name)) continue;
    await w.claims.take(plan.kind, plan.masakariName, { name: candidate.name });
    let created: T;
    let id: number;
    try {
      await plan.preflight?.(candidate);
      id = await plan.takeId();
      created = await w.kube.create<T>(plan.ref, w.namespace, plan.body(candidate, id), {
        fieldManager: w.fieldManager,
      });
    } catch (e) {
      await releaseQuietly(w, plan.kind, plan.masakariName, candidate.name);
      if (isAlreadyExists(e)) continue; // its metadata.name was taken meanwhile: the next candidate
      throw e;
    }
    // Bound to the uid, a real cluster's garbage collector removes the claim with the object; the
    // reconciler binds it too, so a failure here fails nothing.
    if (plan.bindClaim) {
      await w.claims
        .take(plan.kind, plan.masakariName, { name: candidate.name, uid: created.metadata.uid ?? '' })
        .catch((err: unknown) => w.log.warn({ err, claim: plan.masakariName }, 'could not bind the name claim'));
    }
    try {
      const fields = { uuid: candidate.uuid, id, ...plan.status?.(created) };
      return { object: await admitCreated(w, plan.ref, created, fields), id, uuid: candidate.uuid };
    } catch (e) {
      if (plan.rollback) {
        await plan.rollback(created).catch((err: unknown) => {
          w.log.error(
            { err, name: created.metadata.name },
            'rollback of a half-created object failed; the reconciler admits it',
          );
        });
      }
      throw plan.statusFailed ? plan.statusFailed(e, created) : e;
    }
  }
  throw new NoFreeNameError(
    `no free metadata.name for ${plan.kind} ${JSON.stringify(plan.masakariName)} ` +
      `(tried ${plan.candidates.map((c) => c.name).join(', ')})`,
  );
}

async function releaseQuietly(
  w: AdmissionWriter & { claims: NameClaims },
  kind: ClaimKind,
  masakariName: string,
  ownerName: string,
): Promise<void> {
  await w.claims.release(kind, masakariName, ownerName).catch((err: unknown) => {
    w.log.warn({ err, claim: masakariName }, 'could not release a name claim; the sweeper will');
  });
}
