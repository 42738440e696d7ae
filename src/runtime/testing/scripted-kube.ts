// A KubeClient for unit tests: every call is recorded, and each method does
// what the test scripts (by default: reject with 501, so an unexpected call
// fails loudly).
import { KubeError } from '../../k8s/client.ts';
import type { KubeClient } from '../../k8s/client.ts';

export interface RecordedCall {
  method: keyof KubeClient;
  args: unknown[];
}

type Impl = { [K in keyof KubeClient]?: (...args: Parameters<KubeClient[K]>) => unknown };

export class ScriptedKube implements KubeClient {
  readonly calls: RecordedCall[] = [];

  constructor(public impl: Impl = {}) {}

  private call<T>(method: keyof KubeClient, args: unknown[]): Promise<T> {
    this.calls.push({ method, args });
    const fn = this.impl[method] as ((...a: unknown[]) => unknown) | undefined;
    if (!fn) return Promise.reject(new KubeError(501, 'NotImplemented', `unscripted ${method}`));
    try {
      return Promise.resolve(fn(...args) as T);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  callsOf(method: keyof KubeClient): RecordedCall[] {
    return this.calls.filter((c) => c.method === method);
  }

  get: KubeClient['get'] = (...a) => this.call('get', a);
  list: KubeClient['list'] = (...a) => this.call('list', a);
  create: KubeClient['create'] = (...a) => this.call('create', a);
  replace: KubeClient['replace'] = (...a) => this.call('replace', a);
  replaceStatus: KubeClient['replaceStatus'] = (...a) => this.call('replaceStatus', a);
  mergePatch: KubeClient['mergePatch'] = (...a) => this.call('mergePatch', a);
  jsonPatch: KubeClient['jsonPatch'] = (...a) => this.call('jsonPatch', a);
  apply: KubeClient['apply'] = (...a) => this.call('apply', a);
  delete: KubeClient['delete'] = (...a) => this.call('delete', a);
  watch: KubeClient['watch'] = (...a) => this.call('watch', a);
}
