// The custom resources as kubectl sees them (the Kubernetes API, not the operator).
import { CoreV1Api, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';

const GROUP = 'masakari.openkeel.io';
const VERSION = 'v1alpha1';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface Cr {
  metadata: { name: string; generation?: number; labels?: Record<string, string> };
  spec: Record<string, unknown>;
  status?: Record<string, unknown> & { uuid?: string; phase?: string; onMaintenance?: boolean };
}

export class Kube {
  private readonly core: CoreV1Api;
  private readonly custom: CustomObjectsApi;
  constructor(readonly kubeconfigPath: string) {
    const kc = new KubeConfig();
    kc.loadFromFile(kubeconfigPath);
    this.core = kc.makeApiClient(CoreV1Api);
    this.custom = kc.makeApiClient(CustomObjectsApi);
  }

  /** Retries while the API server is away (a fault may just have ended), for up to budgetMs. */
  private async retry<T>(what: string, fn: () => Promise<T>, budgetMs = 60_000): Promise<T> {
    const deadline = Date.now() + budgetMs;
    for (;;) {
      try {
        return await fn();
      } catch (e) {
        if (Date.now() > deadline) throw new Error(`${what}: ${(e as Error).message}`);
        await sleep(500);
      }
    }
  }

  createNamespace(name: string): Promise<unknown> {
    return this.retry('create namespace', () =>
      this.core.createNamespace({ body: { metadata: { name, labels: { 'masakari.openkeel.io/test': 'chaos' } } } }),
    );
  }

  /** One list of a kind, no retry, or undefined after timeoutMs (a sampler that must not stall with etcd). */
  async listOnce(namespace: string, plural: string, timeoutMs: number): Promise<Cr[] | undefined> {
    const once = this.custom
      .listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace, plural })
      .then((page) => (page as { items: Cr[] }).items)
      .catch(() => undefined);
    return Promise.race([once, sleep(timeoutMs).then(() => undefined)]);
  }

  /** The namespace's Events (core/v1, which also shows events.k8s.io/v1 ones): reason, object name, last time. */
  events(namespace: string): Promise<{ reason: string; name: string; at: number; note: string }[]> {
    return this.retry('list events', async () => {
      const list = await this.core.listNamespacedEvent({ namespace });
      return list.items.map((e) => {
        const times = [e.eventTime, e.lastTimestamp, e.series?.lastObservedTime, e.firstTimestamp]
          .filter((t): t is Date => t !== undefined && t !== null)
          .map((t) => new Date(t).getTime());
        return {
          reason: e.reason ?? '',
          name: e.involvedObject.name ?? '',
          at: Math.max(0, ...times),
          note: e.message ?? '',
        };
      });
    });
  }

  async deleteNamespace(name: string): Promise<void> {
    await this.core.deleteNamespace({ name }).catch(() => undefined);
  }

  /** Every object of a kind in the namespace, paged as a careful client pages. */
  list(namespace: string, plural: string): Promise<Cr[]> {
    return this.retry(`list ${plural}`, async () => {
      const out: Cr[] = [];
      let next: string | undefined;
      do {
        const page = (await this.custom.listNamespacedCustomObject({
          group: GROUP,
          version: VERSION,
          namespace,
          plural,
          limit: 100,
          ...(next ? { _continue: next } : {}),
        })) as { items: Cr[]; metadata?: { continue?: string } };
        out.push(...page.items);
        next = page.metadata?.continue || undefined;
      } while (next);
      return out;
    });
  }
}
