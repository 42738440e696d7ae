// FOR UNIT TESTS ONLY: the real informers (src/runtime/informer.ts) over a
// FakeKube. They list and watch the fake like the API server, so a unit test
// exercises the same cache code as production: resourceVersions, local
// writes, selectors, relists. FakeKube delivers watch events synchronously,
// so once started a cache is current when a write returns, unless the test
// calls kube.holdWatches() to make it lag.
import { pino } from 'pino';
import type { Logger } from 'pino';
import type { ResourceRef } from '../k8s/client.ts';
import { KubeInformer } from '../runtime/informer.ts';
import type { InformerOptions, KubeObjectLike } from '../runtime/types.ts';
import type { FakeKube } from './fake-kube.ts';

export const silentLog: Logger = pino({ level: 'silent' });

export class FakeInformers {
  private readonly made: Array<KubeInformer<KubeObjectLike>> = [];

  constructor(
    private readonly kube: FakeKube,
    private readonly log: Logger = silentLog,
  ) {}

  /** The informer factory that components take (not started: the component starts it). */
  readonly factory = <T extends KubeObjectLike>(ref: ResourceRef, opts: InformerOptions<T>): KubeInformer<T> => {
    const informer = new KubeInformer<T>(ref, opts, {
      kube: this.kube,
      log: this.log,
      backoff: { delayMs: 1, capMs: 50 },
    });
    this.made.push(informer as unknown as KubeInformer<KubeObjectLike>);
    return informer;
  };

  /** A started, synced informer. */
  async started<T extends KubeObjectLike>(ref: ResourceRef, opts: InformerOptions<T>): Promise<KubeInformer<T>> {
    const informer = this.factory(ref, opts);
    await informer.start();
    return informer;
  }

  stopAll(): void {
    for (const i of this.made) i.stop();
  }
}
