// FOR UNIT TESTS ONLY: the store's parts wired over FakeKube, the way
// createCrRepository wires them over a real API server.
import { pino } from 'pino';
import { FIELD_MANAGERS } from '../../model/constants.ts';
import type { AdmissionDeps } from '../../reconcilers/admission.ts';
import { MASAKARI_VALIDATORS } from '../../reconcilers/validators.ts';
import type { InformerFactory } from '../caches.ts';
import { createStoreCaches } from '../caches.ts';
import { NameClaims } from '../claims.ts';
import { createIdAllocator } from '../ids.ts';
import { Lifecycle } from '../lifecycle.ts';
import { CrRepository } from '../repository.ts';
import { FakeInformer, FakeKube } from './fake-kube.ts';

export const NS = 'unit';

export function storeFixture(
  opts: { claimGraceMs?: number; pendingClaimMs?: number; claimDecisionGraceMs?: number; now?: () => Date } = {},
) {
  const kube = new FakeKube();
  const log = pino({ level: 'silent' });
  const factory: InformerFactory = (ref, o) => new FakeInformer(kube, ref, o);
  const caches = createStoreCaches(factory, NS);
  const claims = new NameClaims({ kube, namespace: NS, log, graceMs: opts.claimGraceMs ?? 120_000, now: opts.now });
  const ids = {
    segments: createIdAllocator(kube, NS, 'segments', 20),
    hosts: createIdAllocator(kube, NS, 'hosts', 20),
    notifications: createIdAllocator(kube, NS, 'notifications', 20),
  };
  const lifecycle = new Lifecycle({ kube, namespace: NS, claims, caches, log, fieldManager: FIELD_MANAGERS.api });
  const now = opts.now ?? (() => new Date());
  const repo = new CrRepository({
    kube,
    namespace: NS,
    log,
    caches,
    claims,
    lifecycle,
    ids,
    pendingClaimMs: opts.pendingClaimMs,
    claimDecisionGraceMs: opts.claimDecisionGraceMs,
    now,
  });
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
  return { kube, caches, claims, ids, repo, admission };
}

export const segmentInput = (name: string) => ({
  name,
  service_type: 'COMPUTE',
  recovery_method: 'auto' as const,
  description: null,
  enabled: true,
});

export const hostInput = (name: string) => ({
  name,
  type: 'COMPUTE',
  control_attributes: 'SSH',
  reserved: false,
  on_maintenance: false,
});
