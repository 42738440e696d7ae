// What the api component's tests start it with: the process context of a
// noauth2 configuration with defaults, and the in-memory repository in place
// of the CR store.
import pino from 'pino';
import { Registry } from 'prom-client';
import type { ApiRepository } from '../component.ts';
import { MemoryRepository } from '../../domain/testing/memory-repository.ts';
import { loadConfig } from '../../config/load.ts';
import type { AppContext } from '../../app/component.ts';
import type { KubeClient } from '../../k8s/client.ts';

/** The default configuration with auth_strategy noauth2, a silent logger, no Kubernetes client. */
export function componentContext(): AppContext {
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

/** The in-memory repository, always started and ready. */
export function readyMemoryStore(): ApiRepository {
  const repo = new MemoryRepository() as MemoryRepository & ApiRepository;
  repo.start = async () => undefined;
  repo.stop = () => undefined;
  repo.ready = () => true;
  return repo;
}
