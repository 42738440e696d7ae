// Shared set-up for the runtime's integration tests: a fresh namespace on the
// shared control plane and a KubeClient on it.
import { pino } from 'pino';
import type { Logger } from 'pino';
import { useNamespace } from '../../support/cluster.ts';
import type { TestNamespace } from '../../support/cluster.ts';
import { createKubeClient } from '../../../src/k8s/kube-client.ts';
import type { ClosableKubeClient } from '../../../src/k8s/kube-client.ts';

export interface RuntimeEnv {
  ns: TestNamespace;
  namespace: string;
  kube: ClosableKubeClient;
  log: Logger;
  close(): Promise<void>;
}

export async function runtimeEnv(prefix: string): Promise<RuntimeEnv> {
  const ns = await useNamespace(prefix);
  const kube = createKubeClient(ns.kc, { timeoutMs: 10_000, userAgent: `masakari-operator-test/${prefix}` });
  return {
    ns,
    namespace: ns.namespace,
    kube,
    log: pino({ level: process.env.MASAKARI_TEST_LOG ?? 'silent' }),
    async close() {
      await ns.cleanup();
      await kube.close();
    },
  };
}

export async function until(cond: () => boolean | Promise<boolean>, ms = 10_000, what = 'condition'): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`${what} not reached within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export const segment = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'masakari.openkeel.io/v1alpha1',
  kind: 'FailoverSegment',
  metadata: { name },
  spec: { name, recoveryMethod: 'auto', serviceType: 'COMPUTE' },
  ...extra,
});
