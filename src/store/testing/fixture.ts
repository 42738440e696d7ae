// FOR UNIT TESTS ONLY: the store's parts wired over FakeKube and the real
// informers, the way createCrRepository wires them over a real API server.
import { pino } from 'pino';
import { FIELD_MANAGERS } from '../../model/constants.ts';
import { createStoreCaches } from '../caches.ts';
import { NameClaims } from '../claims.ts';
import { createIdAllocator } from '../ids.ts';
import { Lifecycle } from '../lifecycle.ts';
import { CrRepository } from '../repository.ts';
import { FakeKube } from '../../testing/fake-kube.ts';
import { FakeInformers } from '../../testing/informers.ts';

export const NS = 'unit';

/** The store over a FakeKube, its caches started and synced. */
export async function storeFixture(opts: { claimGraceMs?: number; pendingClaimMs?: number; now?: () => Date } = {}) {
  const kube = new FakeKube();
  const log = pino({ level: 'silent' });
  const informers = new FakeInformers(kube, log);
  const caches = createStoreCaches(informers.factory, NS);
  await Promise.all(Object.values(caches).map((c) => c.start()));
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
    now,
  });
  return { kube, log, informers, caches, claims, ids, repo, now };
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
