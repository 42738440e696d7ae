// What the api component's tests start it with: the process context of a
// noauth2 configuration with defaults (the in-memory repository in place of
// the CR store is harness.ts's memoryStore).
import pino from 'pino';
import { Registry } from 'prom-client';
import { loadConfig } from '../../config/load.ts';
import type { ContextWithoutManager } from '../../testing/component.ts';
import type { KubeClient } from '../../k8s/client.ts';

/** The default configuration with auth_strategy noauth2, a silent logger, no Kubernetes client; startComponent adds the manager. */
export function componentContext(): ContextWithoutManager {
  const config = loadConfig({ env: {} }).config;
  config.DEFAULT.auth_strategy = 'noauth2';
  return {
    config,
    namespace: 'test',
    kube: {} as KubeClient,
    log: pino({ level: 'silent' }),
    metrics: new Registry(),
    identity: 'test',
    signal: new AbortController().signal,
  };
}
