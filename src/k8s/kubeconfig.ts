// Where the operator finds its cluster credentials, and how they become TLS
// options and headers.
//
// Why not @kubernetes/client-node's KubeConfig: importing it loads the whole
// generated API (a large share of a process's resident memory) and we need
// only its loader. This module reads kubeconfig files and the in-cluster
// service account itself, which covers tokens, token files, client
// certificates and basic auth. Exec plugins and auth providers (cloud
// logins) are rare for an operator; for those it loads client-node on demand
// and lets it resolve the credentials, so they keep working.
import fs from 'node:fs';
import type https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { load as parseYaml } from 'js-yaml';

const SA_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

export interface LoadKubeConfigOptions {
  /** Explicit kubeconfig file (e.g. a --kubeconfig flag); wins over everything. */
  path?: string;
  /** Context to use instead of the file's current-context. */
  context?: string;
  env?: NodeJS.ProcessEnv;
  /** Prefix for the in-cluster service-account files (tests only); default ''. */
  inClusterRoot?: string;
}

export interface KubeCluster {
  name: string;
  server: string;
  caData?: string;
  caFile?: string;
  skipTLSVerify?: boolean;
  tlsServerName?: string;
  proxyUrl?: string;
}

export interface KubeUser {
  name: string;
  token?: string;
  /** Re-read on every credential refresh (rotating projected service-account tokens). */
  tokenFile?: string;
  certData?: string;
  certFile?: string;
  keyData?: string;
  keyFile?: string;
  username?: string;
  password?: string;
  /** exec plugin or auth-provider: resolved by @kubernetes/client-node, loaded on demand. */
  delegated?: boolean;
}

export interface KubeContext {
  name: string;
  cluster: string;
  user: string;
  namespace?: string;
}

/** What the transport needs from a kubeconfig (client-node's KubeConfig has the same two methods). */
export interface KubeConnectionConfig {
  getCurrentCluster(): { server: string; proxyUrl?: string } | null;
  applyToHTTPSOptions(opts: https.RequestOptions): Promise<void>;
}

type Source = { kind: 'files'; paths: string[] } | { kind: 'cluster'; root: string };

type Raw = Record<string, unknown>;
const rec = (v: unknown): Raw => (v && typeof v === 'object' ? (v as Raw) : {});
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const list = (v: unknown): Raw[] => (Array.isArray(v) ? v.map(rec) : []);

/**
 * The named entries of one of a kubeconfig's lists (clusters, users,
 * contexts: `{name, <field>: {...}}`) added to `into`; a name already there
 * stays, so the first file to name it wins, as kubectl merges KUBECONFIG.
 */
function mergeNamed<T>(
  into: Map<string, T>,
  entries: unknown,
  field: string,
  read: (body: Raw, name: string) => T,
): void {
  for (const e of list(entries)) {
    const name = str(e.name);
    if (name && !into.has(name)) into.set(name, read(rec(e[field]), name));
  }
}

export class KubeConfig implements KubeConnectionConfig {
  readonly clusters = new Map<string, KubeCluster>();
  readonly users = new Map<string, KubeUser>();
  readonly contexts = new Map<string, KubeContext>();
  private currentContext = '';
  private delegate: Promise<KubeConnectionConfig> | undefined;

  private constructor(private readonly source: Source) {}

  /** Files in kubectl's merge order: the first file to define a name (or current-context) wins. */
  static fromFiles(paths: string[]): KubeConfig {
    const kc = new KubeConfig({ kind: 'files', paths });
    for (const p of paths) kc.mergeFile(p);
    return kc;
  }

  /** The pod's service account: https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT, its CA and rotating token. */
  static inCluster(env: NodeJS.ProcessEnv, root = ''): KubeConfig {
    const kc = new KubeConfig({ kind: 'cluster', root });
    const host = env.KUBERNETES_SERVICE_HOST ?? '';
    const port = env.KUBERNETES_SERVICE_PORT ?? '443';
    const server = `https://${host.includes(':') ? `[${host}]` : host}:${port}`;
    kc.clusters.set('in-cluster', { name: 'in-cluster', server, caFile: path.join(root + SA_DIR, 'ca.crt') });
    kc.users.set('in-cluster', { name: 'in-cluster', tokenFile: path.join(root + SA_DIR, 'token') });
    kc.contexts.set('in-cluster', { name: 'in-cluster', cluster: 'in-cluster', user: 'in-cluster' });
    kc.currentContext = 'in-cluster';
    return kc;
  }

  private mergeFile(file: string): void {
    const doc = rec(parseYaml(fs.readFileSync(file, 'utf8')));
    // Relative paths in a kubeconfig are relative to the file, as kubectl reads them.
    const abs = (p: string | undefined) => (p && !path.isAbsolute(p) ? path.resolve(path.dirname(file), p) : p);
    mergeNamed(this.clusters, doc.clusters, 'cluster', (cl, name) => ({
      name,
      server: str(cl.server) ?? '',
      caData: str(cl['certificate-authority-data']),
      caFile: abs(str(cl['certificate-authority'])),
      skipTLSVerify: cl['insecure-skip-tls-verify'] === true,
      tlsServerName: str(cl['tls-server-name']),
      proxyUrl: str(cl['proxy-url']),
    }));
    mergeNamed(this.users, doc.users, 'user', (us, name) => ({
      name,
      token: str(us.token),
      tokenFile: abs(str(us.tokenFile)),
      certData: str(us['client-certificate-data']),
      certFile: abs(str(us['client-certificate'])),
      keyData: str(us['client-key-data']),
      keyFile: abs(str(us['client-key'])),
      username: str(us.username),
      password: str(us.password),
      delegated: us.exec !== undefined || us['auth-provider'] !== undefined,
    }));
    mergeNamed(this.contexts, doc.contexts, 'context', (cx, name) => ({
      name,
      cluster: str(cx.cluster) ?? '',
      user: str(cx.user) ?? '',
      namespace: str(cx.namespace),
    }));
    if (!this.currentContext) this.currentContext = str(doc['current-context']) ?? '';
  }

  getCurrentContext(): string {
    return this.currentContext;
  }

  setCurrentContext(name: string): void {
    if (!this.contexts.has(name)) throw new Error(`kubeconfig has no context "${name}"`);
    this.currentContext = name;
    this.delegate = undefined;
  }

  getContextObject(name: string): KubeContext | undefined {
    return this.contexts.get(name);
  }

  getCurrentCluster(): KubeCluster | null {
    const ctx = this.contexts.get(this.currentContext);
    return (ctx && this.clusters.get(ctx.cluster)) ?? null;
  }

  getCurrentUser(): KubeUser | null {
    const ctx = this.contexts.get(this.currentContext);
    return (ctx && this.users.get(ctx.user)) ?? null;
  }

  /** Fills in CA, client certificate and key, TLS checks and the Authorization header. */
  async applyToHTTPSOptions(opts: https.RequestOptions): Promise<void> {
    const cluster = this.getCurrentCluster();
    if (!cluster) throw new Error(`kubeconfig context "${this.currentContext}" names no cluster`);
    const user = this.getCurrentUser();
    if (user?.delegated) return (await this.delegated()).applyToHTTPSOptions(opts);
    const read = (file: string) => fs.readFileSync(file);
    const b64 = (data: string) => Buffer.from(data, 'base64');
    if (cluster.caData) opts.ca = b64(cluster.caData);
    else if (cluster.caFile && fs.existsSync(cluster.caFile)) opts.ca = read(cluster.caFile);
    if (cluster.skipTLSVerify) opts.rejectUnauthorized = false;
    if (cluster.tlsServerName) opts.servername = cluster.tlsServerName;
    if (!user) return;
    if (user.certData) opts.cert = b64(user.certData);
    else if (user.certFile) opts.cert = read(user.certFile);
    if (user.keyData) opts.key = b64(user.keyData);
    else if (user.keyFile) opts.key = read(user.keyFile);
    const headers = (opts.headers ??= {}) as Record<string, string>;
    const token = user.tokenFile ? fs.readFileSync(user.tokenFile, 'utf8').trim() : user.token;
    if (token) headers.Authorization = `Bearer ${token}`;
    else if (user.username && user.password) opts.auth = `${user.username}:${user.password}`;
  }

  /** client-node's KubeConfig over the same source, for exec plugins and auth providers. */
  private delegated(): Promise<KubeConnectionConfig> {
    // An optional dependency: the container image leaves it out (it is about
    // half of node_modules), so a kubeconfig that needs it says so plainly.
    this.delegate ??= import('@kubernetes/client-node').then(({ KubeConfig: Full }) => {
      const full = new Full();
      if (this.source.kind === 'cluster') full.loadFromCluster(this.source.root);
      else {
        const [first, ...rest] = this.source.paths as [string, ...string[]];
        full.loadFromFile(first);
        for (const p of rest) {
          const more = new Full();
          more.loadFromFile(p);
          full.mergeConfig(more, true);
        }
      }
      full.setCurrentContext(this.currentContext);
      return full;
    }, clientNodeMissing);
    return this.delegate;
  }
}

function clientNodeMissing(err: unknown): never {
  if ((err as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND') {
    throw new Error(
      'this kubeconfig user needs an exec plugin or auth provider, which masakari-operator resolves with the ' +
        'optional package @kubernetes/client-node; it is not installed (the container image leaves it out): ' +
        'install it, or use a token, token file or client certificate',
    );
  }
  throw err;
}

/**
 * Order: explicit path, then $KUBECONFIG (path-list, merged like kubectl),
 * then the in-cluster service account (a pod must not pick up a stray
 * ~/.kube/config baked into the image), then ~/.kube/config.
 */
export function loadKubeConfig(opts: LoadKubeConfigOptions = {}): KubeConfig {
  const env = opts.env ?? process.env;
  const envPaths = (env.KUBECONFIG ?? '').split(path.delimiter).filter(Boolean);
  const home = path.join(env.HOME ?? os.homedir(), '.kube', 'config');
  const inClusterRoot = opts.inClusterRoot ?? '';

  let kc: KubeConfig;
  if (opts.path) {
    kc = KubeConfig.fromFiles([opts.path]);
  } else if (envPaths.length > 0) {
    const [first, ...rest] = envPaths as [string, ...string[]];
    kc = KubeConfig.fromFiles([first, ...rest.filter((p) => fs.existsSync(p))]);
  } else if (env.KUBERNETES_SERVICE_HOST && fs.existsSync(path.join(inClusterRoot + SA_DIR, 'token'))) {
    kc = KubeConfig.inCluster(env, inClusterRoot);
  } else if (fs.existsSync(home)) {
    kc = KubeConfig.fromFiles([home]);
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
