// FOR UNIT TESTS ONLY: the store's fixture (src/store/testing/fixture.ts)
// plus the admission dependencies the reconcilers take, wired the way
// src/reconcilers/component.ts wires them over a real store.
import { FIELD_MANAGERS } from '../../model/constants.ts';
import { Lifecycle } from '../../store/lifecycle.ts';
import { NS, storeFixture as bareStoreFixture } from '../../store/testing/fixture.ts';
import type { AdmissionDeps } from '../admission.ts';
import { MASAKARI_VALIDATORS } from '../../domain/spec-validators.ts';

export { NS, segmentInput, hostInput } from '../../store/testing/fixture.ts';

export async function storeFixture(opts: Parameters<typeof bareStoreFixture>[0] = {}) {
  const store = await bareStoreFixture(opts);
  const { kube, log, caches, claims, ids, now } = store;
  const admission: AdmissionDeps = {
    kube,
    namespace: NS,
    log,
    caches,
    claims,
    lifecycle: new Lifecycle({ kube, namespace: NS, claims, caches, log, fieldManager: FIELD_MANAGERS.reconciler }),
    ids,
    validators: MASAKARI_VALIDATORS,
    duplicateWindowSeconds: 180,
    pendingClaimMs: opts.pendingClaimMs ?? 300_000,
    now,
    confirmedClaims: new Map(),
  };
  return { ...store, admission };
}
