// Where the operator finds its cluster credentials.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';

const SA_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

export interface LoadKubeConfigOptions {
  /** Explicit kubeconfig file (e.g. a --kubeconfig flag); wins over everything. */
  path?: string;
  /** Context to use instead of the file's current-context. */
  context?: string;
  env?: NodeJS.ProcessEnv;
  /** Prefix for the in-cluster service-account files (tests only); default ''. */
  inClusterRoot?: string;
}

/**
 * Order: explicit path, then $KUBECONFIG (path-list, merged like kubectl),
 * then the in-cluster service account (a pod must not pick up a stray
 * ~/.kube/config baked into the image), then ~/.kube/config.
 * The in-cluster config re-reads the rotating projected token (client-node's
 * tokenFile provider, refreshed every 60 s).
 */
export function loadKubeConfig(opts: LoadKubeConfigOptions = {}): KubeConfig {
  const env = opts.env ?? process.env;
  const kc = new KubeConfig();
  const envPaths = (env.KUBECONFIG ?? '').split(path.delimiter).filter(Boolean);
  const home = path.join(env.HOME ?? os.homedir(), '.kube', 'config');
  const inClusterRoot = opts.inClusterRoot ?? '';

  if (opts.path) {
    kc.loadFromFile(opts.path);
  } else if (envPaths.length > 0) {
    const [first, ...rest] = envPaths as [string, ...string[]];
    kc.loadFromFile(first);
    for (const p of rest) {
      if (!fs.existsSync(p)) continue;
      const more = new KubeConfig();
      more.loadFromFile(p);
      kc.mergeConfig(more, true);
    }
  } else if (env.KUBERNETES_SERVICE_HOST && fs.existsSync(inClusterRoot + SA_TOKEN)) {
    kc.loadFromCluster(inClusterRoot);
  } else if (fs.existsSync(home)) {
    kc.loadFromFile(home);
  } else {
    throw new Error(
      'no Kubernetes credentials: set KUBECONFIG, run in a pod with a service account, or create ~/.kube/config',
    );
  }
  if (opts.context) kc.setCurrentContext(opts.context);
  if (!kc.getCurrentCluster()) {
    throw new Error(`kubeconfig context "${kc.getCurrentContext()}" names no cluster`);
  }
  return kc;
}
