// CONTRACT. How main.ts starts the selected components (MASAKARI_COMPONENTS =
// api, engine, remediation, detection). Each component module exports
// `createComponent(ctx: AppContext): Promise<Component>`:
//   api         → src/api/component.ts
//   engine      → src/engine/component.ts
//   remediation → src/remediation/component.ts
//   detection   → src/detection/component.ts

import type { Logger } from 'pino';
import type { AdmissionSeal } from '../store/index.ts';
import type { Registry } from 'prom-client';
import type { KubeClient } from '../k8s/client.ts';
import type { Config } from '../config/config.ts';
import type { NovaClient } from '../openstack/types.ts';
import type { OpenStackSession } from '../openstack/session.ts';
import type { Manager } from '../runtime/manager.ts';

export interface AppContext {
  config: Config;
  /** Namespace that holds this deployment's custom resources (MASAKARI_NAMESPACE). */
  namespace: string;
  kube: KubeClient;
  /** Undefined when no OpenStack credentials are configured and no simulator runs. */
  nova?: NovaClient;
  /**
   * Added by the process shell: the Keystone login and connection pool behind
   * ctx.nova (credentials in .credentials), for the API's token validation to
   * share. Undefined exactly when nova is.
   */
  openstack?: OpenStackSession;
  /** The process logger (identity, version on every line); a component adds its own `component` child. */
  log: Logger;
  metrics: Registry;
  /** Identity of this process (pod name or hostname + pid), for leases and events. */
  identity: string;
  /** Aborted on SIGTERM/SIGINT. */
  signal: AbortSignal;
  /**
   * The process's manager (src/runtime/manager.ts): its caches, one per
   * (resource, namespace, selectors), are shared by every component; it runs
   * the components' runnables and leader elections in one start and one
   * shutdown order. The process shell starts it once every component is
   * created, and stops it after every component stopped; a component never
   * starts or stops it (tests use src/testing/component.ts startComponent).
   */
  manager: Manager;
  /**
   * Seals the notifications the REST path creates in `namespace`, so they need
   * no admission status write (src/store/admission/seal.ts). Set by the process
   * shell when it could load the key; ctx.kube then shows sealed notifications
   * admitted. Undefined: admission writes status, as it always could.
   */
  admissionSeal?: AdmissionSeal;
}

export interface Component {
  name: string;
  /** True once the component can do its job (caches synced, server listening). */
  ready(): boolean;
  /** Graceful stop: stop accepting work, finish or hand over what is in flight. */
  stop(): Promise<void>;
}

export type ComponentFactory = (ctx: AppContext) => Promise<Component>;
