// controller-runtime's builder on the manager: what a controller watches,
// which keys each change enqueues, and its reconcile, declared in one place.
//
//   manager.controller(name, { lease })
//     .for(primary, filter?)        // a cached object's own name, on add and update
//     .watches(other, map)          // the keys `map` names for another kind's change
//     .owns(children, ownerKind)    // the owner named by a child's ownerReferences
//     .reconcile(fn);               // registers it with the manager; returns { enqueue }
//
// Leadership-aware: the informer handlers are registered once and enqueue
// only while this process leads the Lease; each term gets a new controller
// (queue and workers), which starts with every cached primary object passing
// the filter, as controller-runtime's first list does.
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { Controller } from './controller.ts';
import type { ControllerFactory, QueueingController } from './controller.ts';
import type { Informer, InformerEvent, KubeObjectLike, Reconciler } from './types.ts';
import type { LeaseHold } from './leaderelection.ts';

/** What the builder needs of the manager (src/runtime/manager.ts implements it). */
export interface ControllerHost {
  add(
    runnable: { start(signal: AbortSignal, hold?: LeaseHold): Promise<void> },
    opts: { name: string; needLeaderElection: true; lease: string },
  ): void;
  readonly log: Logger;
  readonly metrics?: Registry;
}

export interface ControllerBuilderOptions {
  /** The Lease (in the manager's namespace) whose holder runs the controller. */
  lease: string;
  /** Concurrent reconciles of different keys; default 1. */
  workers?: number;
  /** Makes each term's controller; default the runtime's Controller. Tests pass a double. */
  makeController?: ControllerFactory;
  /**
   * Runs at the start of every term, once the term's controller exists and
   * before the cached primaries are enqueued (keys it enqueues reach the new
   * controller). The end of a term is the manager's: Manager.onTermEnd.
   */
  onTermStart?: (signal: AbortSignal, hold?: LeaseHold) => void;
}

/** What the builder uses of a cache. */
export type Watched<T extends KubeObjectLike> = Pick<Informer<T>, 'on' | 'list'>;

/** The keys a change of a watched object enqueues (undefined ones are skipped). */
export type KeyMap<U> = (obj: U, old: U | undefined, event: InformerEvent) => Iterable<string | undefined>;

export class ControllerBuilder {
  private readonly wiring: Array<(enqueue: (key: string | undefined) => void) => void> = [];
  private primary: { list(): KubeObjectLike[]; filter: (obj: KubeObjectLike) => boolean } | undefined;
  private registered = false;

  constructor(
    private readonly host: ControllerHost,
    readonly name: string,
    private readonly opts: ControllerBuilderOptions,
  ) {}

  /** The primary kind: each object's own name, on add and update, and every one at the start of a term. */
  for<T extends KubeObjectLike>(informer: Watched<T>, filter: (obj: T) => boolean = () => true): this {
    if (this.primary) throw new Error(`controller ${this.name}: for() given twice`);
    this.primary = { list: () => informer.list(), filter: filter as (obj: KubeObjectLike) => boolean };
    return this.watches(informer, (obj, _old, event) => (event !== 'delete' && filter(obj) ? [obj.metadata.name] : []));
  }

  /** Another kind (or the same one, for more keys): `map` names the keys a change enqueues. */
  watches<U extends KubeObjectLike>(informer: Watched<U>, map: KeyMap<U>): this {
    this.wiring.push((enqueue) => {
      for (const event of ['add', 'update', 'delete'] as const) {
        informer.on(event, (obj, old) => {
          for (const key of map(obj, old, event)) enqueue(key);
        });
      }
    });
    return this;
  }

  /** Children of the primary kind: a change enqueues the owner their ownerReferences name with `ownerKind`. */
  owns<U extends KubeObjectLike>(informer: Watched<U>, ownerKind: string): this {
    return this.watches(informer, (obj) =>
      (obj.metadata.ownerReferences ?? []).filter((r) => r.kind === ownerKind).map((r) => r.name),
    );
  }

  /**
   * Registers the controller with the manager; it runs in every term of
   * opts.lease. The handle enqueues into the current term's controller (a
   * reconcile's follow-up work), and drops keys between terms.
   */
  reconcile(fn: Reconciler): { enqueue(key: string): void } {
    if (this.registered) throw new Error(`controller ${this.name}: reconcile() given twice`);
    this.registered = true;
    let active: QueueingController | undefined;
    const enqueue = (key: string | undefined): void => {
      if (key) active?.enqueue(key);
    };
    for (const wire of this.wiring) wire(enqueue);
    const make: ControllerFactory =
      this.opts.makeController ??
      ((name, reconcile) =>
        new Controller({
          name,
          reconcile,
          workers: this.opts.workers ?? 1,
          log: this.host.log,
          ...(this.host.metrics ? { metrics: this.host.metrics } : {}),
        }));
    this.host.add(
      {
        start: async (signal, hold) => {
          const controller = make(this.name, fn);
          active = controller;
          this.opts.onTermStart?.(signal, hold);
          const primary = this.primary;
          if (primary) {
            for (const obj of primary.list()) if (primary.filter(obj)) enqueue(obj.metadata.name);
          }
          try {
            await controller.start(signal);
          } finally {
            if (active === controller) active = undefined;
          }
        },
      },
      { name: this.name, needLeaderElection: true, lease: this.opts.lease },
    );
    return { enqueue };
  }
}
