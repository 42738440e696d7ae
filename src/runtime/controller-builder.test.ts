import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { pino } from 'pino';
import { ControllerBuilder } from './controller-builder.ts';
import type { ControllerHost } from './controller-builder.ts';
import type { QueueingController } from './controller.ts';
import type { InformerEvent, KubeObjectLike } from './types.ts';

type Obj = KubeObjectLike & { spec?: { name?: string } };
const obj = (name: string, extra: Partial<Obj['metadata']> = {}): Obj => ({ metadata: { name, ...extra } });

/** A cache double: the objects it lists, and its handlers, fired by hand. */
function cache(initial: Obj[] = []) {
  const handlers: Record<InformerEvent, Array<(o: Obj, old?: Obj) => void>> = { add: [], update: [], delete: [] };
  return {
    objects: initial,
    list: () => initial,
    on: (event: InformerEvent, h: (o: Obj, old?: Obj) => void) => void handlers[event].push(h),
    fire: (event: InformerEvent, o: Obj, old?: Obj) => handlers[event].forEach((h) => h(o, old)),
  };
}

/** A manager double that keeps the runnable, and a controller double that records its keys. */
function harness() {
  const added: Array<{ runnable: Parameters<ControllerHost['add']>[0]; lease: string; name: string }> = [];
  const host: ControllerHost = {
    add: (runnable, opts) => void added.push({ runnable, lease: opts.lease, name: opts.name }),
    log: pino({ level: 'silent' }),
  };
  const terms: string[][] = [];
  const makeController = (): QueueingController => {
    const keys: string[] = [];
    terms.push(keys);
    return {
      enqueue: (k) => void keys.push(k),
      enqueueAfter: (k) => void keys.push(k),
      start: (signal) => new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve())),
    };
  };
  return { added, host, terms, makeController };
}

test('registers one leader-elected runnable under its Lease when reconcile() is given', () => {
  const h = harness();
  new ControllerBuilder(h.host, 'c', { lease: 'L', makeController: h.makeController })
    .for(cache())
    .reconcile(async () => undefined);
  assert.equal(
    h.added.map((a) => [a.name, a.lease]),
    [['c', 'L']],
  );
});

test('enqueues only while leading; a term starts with every cached primary object that passes the filter', async () => {
  const h = harness();
  const primary = cache([obj('a'), obj('skip'), obj('b')]);
  const order: string[] = [];
  new ControllerBuilder(h.host, 'c', {
    lease: 'L',
    makeController: h.makeController,
    onTermStart: () => order.push(`term start, ${h.terms.at(-1)?.length ?? 0} keys`),
  })
    .for(primary, (o) => o.metadata.name !== 'skip')
    .reconcile(async () => undefined);
  primary.fire('add', obj('before-leading'));
  assert.is(h.terms.length, 0);

  const term = new AbortController();
  const running = h.added[0]!.runnable.start(term.signal);
  assert.equal(order, ['term start, 0 keys']);
  assert.equal(h.terms[0], ['a', 'b']);
  primary.fire('update', obj('c'));
  primary.fire('add', obj('skip'));
  primary.fire('delete', obj('a'));
  assert.equal(h.terms[0], ['a', 'b', 'c'], 'add and update of a passing object; not a delete, not a filtered one');

  term.abort();
  await running;
  primary.fire('add', obj('after'));
  assert.equal(h.terms[0], ['a', 'b', 'c'], 'nothing after the term');

  const next = new AbortController();
  const again = h.added[0]!.runnable.start(next.signal);
  assert.equal(h.terms[1], ['a', 'b'], 'a new term gets a new controller and the full list again');
  next.abort();
  await again;
});

test('watches maps another kind to keys; owns enqueues the owner named by ownerReferences', async () => {
  const h = harness();
  const primary = cache();
  const other = cache();
  const children = cache();
  new ControllerBuilder(h.host, 'c', { lease: 'L', makeController: h.makeController })
    .for(primary)
    .watches(other, (o, old, event) => [`${event}:${o.metadata.name}`, old ? `old:${old.metadata.name}` : undefined])
    .owns(children, 'Parent')
    .reconcile(async () => undefined);
  const term = new AbortController();
  const running = h.added[0]!.runnable.start(term.signal);
  other.fire('update', obj('x'), obj('w'));
  other.fire('delete', obj('y'));
  children.fire('add', {
    metadata: {
      name: 'child',
      ownerReferences: [
        { kind: 'Parent', name: 'p1' },
        { kind: 'Other', name: 'o1' },
      ],
    },
  });
  assert.equal(h.terms[0], ['update:x', 'old:w', 'delete:y', 'p1']);
  term.abort();
  await running;
});

test('the term start gets the term signal and hold; the handle reconcile() returns enqueues into the current term only', async () => {
  const h = harness();
  const seen: Array<{ signal: AbortSignal; held?: boolean }> = [];
  const handle = new ControllerBuilder(h.host, 'c', {
    lease: 'L',
    makeController: h.makeController,
    onTermStart: (signal, hold) => {
      seen.push({ signal, held: hold?.held() });
      handle.enqueue('from the term start');
    },
  })
    .watches(cache(), () => [])
    .reconcile(async () => undefined);
  handle.enqueue('between terms');
  const term = new AbortController();
  const running = h.added[0]!.runnable.start(term.signal, { held: () => true });
  handle.enqueue('follow-up');
  assert.is(seen[0]?.signal, term.signal);
  assert.is(seen[0]?.held, true);
  assert.equal(h.terms[0], ['from the term start', 'follow-up'], 'watches() alone lists nothing at the term start');
  term.abort();
  await running;
  handle.enqueue('after the term');
  assert.equal(h.terms[0], ['from the term start', 'follow-up']);
});

test('for() and reconcile() are given once', () => {
  const h = harness();
  const b = new ControllerBuilder(h.host, 'c', { lease: 'L', makeController: h.makeController }).for(cache());
  assert.throws(() => b.for(cache()), /for\(\) given twice/);
  b.reconcile(async () => undefined);
  assert.throws(() => b.reconcile(async () => undefined), /reconcile\(\) given twice/);
});

test.run();
