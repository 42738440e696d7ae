// The walk of one notification (docs/design/store.md, "The walk of one
// notification") goes down: every API call a notification's intake makes is
// made from a stack whose store files, outermost first, come in the order of
// that list, each once. A callback handed to a lower file that calls back
// into a file above it (the intake's onClaimed and exists once did, into
// repository.ts) shows up as a file out of order, and so does a file the list
// does not name.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { pino } from 'pino';
import type { KubeClient, ResourceRef } from '../../k8s/client.ts';
import { KubeInformer } from '../../runtime/informer.ts';
import type { InformerOptions, KubeObjectLike } from '../../runtime/types.ts';
import { FIELD_MANAGERS } from '../../model/constants.ts';
import { FakeKube } from '../../testing/fake-kube.ts';
import { createStoreCaches } from '../caches.ts';
import { NameClaims } from '../claims.ts';
import { createIdAllocator } from '../ids.ts';
import { Lifecycle } from '../lifecycle.ts';
import { CrRepository } from '../repository.ts';
import { NS, hostInput, segmentInput } from '../testing/fixture.ts';
import { createAdmissionSeal, withSealedNotifications } from './seal.ts';
import { SealedVisibility } from './visibility.ts';

const STORE_MD = fileURLToPath(new URL('../../../docs/design/store.md', import.meta.url));

/** The store files of the documented walk, in its order (paths under src/store/). */
function documentedWalk(): string[] {
  const md = readFileSync(STORE_MD, 'utf8');
  const start = md.indexOf('### The walk of one notification');
  const section = md.slice(start, md.indexOf('\n## ', start));
  const items = [...section.matchAll(/(\d+)\.\s+`((?:admission\/)?[a-z-]+\.ts)`/g)];
  return items.sort((a, b) => Number(a[1]) - Number(b[1])).map((m) => m[2] ?? '');
}

/** The src/store/ files of a stack, outermost first, consecutive frames of one file counted once. */
function storeFiles(stack: string): string[] {
  const files: string[] = [];
  for (const frame of stack.split('\n').slice(1).reverse()) {
    const m = frame.match(/src\/store\/([a-z/-]+\.ts):\d+/);
    if (!m?.[1] || m[1].endsWith('.test.ts')) continue;
    if (files.at(-1) !== m[1]) files.push(m[1]);
  }
  return files;
}

/** `kube` that keeps the stack of every call while `on()` says so. */
function recording(kube: KubeClient, stacks: string[], on: () => boolean): KubeClient {
  return new Proxy(kube, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (on()) stacks.push(new Error('walk').stack ?? '');
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

test('the documented walk names each file once', () => {
  const walk = documentedWalk();
  assert.ok(walk.length >= 10, `parsed ${walk.join(', ')}`);
  assert.is(walk[0], 'repository.ts');
  assert.ok(walk.includes('admission/notification-intake.ts'));
});

test("a notification's intake calls down the documented walk, entering no store file twice", async () => {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = Infinity;
  const stacks: string[] = [];
  let on = false;
  const log = pino({ level: 'silent' });
  const fake = new FakeKube();
  const seal = createAdmissionSeal(Buffer.alloc(32, 7));
  const kube = recording(withSealedNotifications(fake, seal, NS), stacks, () => on);
  const factory = <T extends KubeObjectLike>(ref: ResourceRef, opts: InformerOptions<T>) =>
    new KubeInformer<T>(ref, opts, { kube, log, backoff: { delayMs: 1, capMs: 50 } });
  const caches = createStoreCaches(factory, NS);
  const now = () => new Date();
  const visibility = new SealedVisibility({
    kube,
    namespace: NS,
    cache: caches.notifications,
    windowSeconds: 180,
    now,
    log,
  });
  try {
    await Promise.all(Object.values(caches).map((c) => c.start()));
    const claims = new NameClaims({ kube, namespace: NS, log, graceMs: 120_000, now });
    const ids = {
      segments: createIdAllocator(kube, NS, 'segments', 20),
      hosts: createIdAllocator(kube, NS, 'hosts', 20),
      notifications: createIdAllocator(kube, NS, 'notifications', 2),
    };
    const lifecycle = new Lifecycle({ kube, namespace: NS, claims, caches, log, fieldManager: FIELD_MANAGERS.api });
    const deps = { kube, namespace: NS, log, caches, claims, lifecycle, ids, now };
    const repo = new CrRepository({ ...deps, seal, sealedVisibility: visibility });
    const unsealed = new CrRepository(deps);
    const s = await repo.createSegment(segmentInput('seg'));
    const h = await repo.createHost(s.uuid, { ...hostInput('compute-1') });
    const input = (t: string, event = 'STOPPED') => ({
      type: 'PROCESS' as const,
      hostname: 'compute-1',
      generated_time: t,
      payload: { process_name: 'nova-compute', event },
      source_host_uuid: h.uuid,
      failover_segment_uuid: s.uuid,
    });

    on = true;
    await repo.createNotification(input('2026-01-01T00:00:00'), 180);
    // Two identical at once: the claim decides, the loser's create is deleted again (yield).
    await Promise.allSettled([
      repo.createNotification(input('2026-01-01T01:00:00', 'A'), 180),
      repo.createNotification(input('2026-01-01T01:00:00', 'A'), 180),
    ]);
    // Without a seal key: the admission status is written in the background.
    await unsealed.createNotification(input('2026-01-01T02:00:00', 'B'), 180);
    await unsealed.settle();
    on = false;

    const walk = documentedWalk();
    assert.ok(stacks.length > 5, `recorded ${stacks.length} API calls`);
    const seen = new Set<string>();
    for (const stack of stacks) {
      const files = storeFiles(stack);
      for (const f of files) seen.add(f);
      const unknown = files.filter((f) => !walk.includes(f));
      assert.equal(unknown, [], `store files the walk does not name, on the stack ${files.join(' > ')}`);
      const order = files.map((f) => walk.indexOf(f));
      assert.ok(
        order.every((at, i) => i === 0 || at > (order[i - 1] ?? -1)),
        `a call climbs or re-enters: ${files.join(' > ')}`,
      );
    }
    assert.ok(seen.has('admission/notification-intake.ts'), [...seen].join(', '));
    assert.ok(seen.has('admission/duplicate-claim.ts'), [...seen].join(', '));
  } finally {
    on = false;
    Error.stackTraceLimit = limit;
    visibility.stop();
    for (const c of Object.values(caches)) c.stop();
  }
});

test.run();
