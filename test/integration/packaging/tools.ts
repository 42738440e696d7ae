// Shared by the packaging tests: the helm binary (built from Go modules on
// first use by hack/helm/build.sh), `helm template` and `kubectl kustomize`
// renders parsed into objects, and server-side dry-run applies.
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { dump, loadAll } from 'js-yaml';
import { runKubectl } from '../../support/cluster.ts';
import { kubectlBinary } from '../../support/kubectl.ts';
import type { KubectlResult, TestNamespace } from '../../support/cluster.ts';

export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const CHART = join(ROOT, 'charts', 'masakari-operator');
export const CONFIG = join(ROOT, 'config');

/** A Kubernetes object as rendered: only the fields the tests read are typed. */
export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [field: string]: unknown;
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command; never throws on a non-zero exit. Past timeoutMs it is killed (code -1). */
export function run(cmd: string, args: string[], timeoutMs: number, stdin?: string): Promise<RunResult> {
  return new Promise((resolve) => {
    const child = execFile(
      cmd,
      args,
      { timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024, encoding: 'utf8', cwd: ROOT },
      (err, stdout, stderr) => {
        const e = err as (Error & { code?: number | string; killed?: boolean }) | null;
        const code = !e ? 0 : e.killed ? -1 : typeof e.code === 'number' ? e.code : -1;
        resolve({ code, stdout, stderr: e && code === -1 ? `${stderr}${e.message}` : stderr });
      },
    );
    // A command that exits without reading its input (tar -x, a failed start) closes the pipe first: the EPIPE
    // that writing then meets is not an error of the test, and unhandled it would crash the test process.
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(stdin ?? '');
  });
}

// The first build compiles helm from source: minutes on a 2-core machine.
const HELM_BUILD_TIMEOUT_MS = 20 * 60_000;
const HELM_TIMEOUT_MS = 60_000;
let helmPath: Promise<string> | undefined;

/** Path of the helm binary, built by hack/helm/build.sh when missing (HELM overrides). */
export function helmBinary(): Promise<string> {
  if (process.env.HELM) return Promise.resolve(process.env.HELM);
  helmPath ??= run(join(ROOT, 'hack', 'helm', 'build.sh'), [], HELM_BUILD_TIMEOUT_MS).then((r) => {
    const path = r.stdout.trim().split('\n').pop() ?? '';
    if (r.code !== 0 || !path) throw new Error(`hack/helm/build.sh failed (exit ${r.code}):\n${r.stderr}`);
    return path;
  });
  return helmPath;
}

export async function helm(args: string[]): Promise<RunResult> {
  return run(await helmBinary(), args, HELM_TIMEOUT_MS);
}

export function parseManifests(text: string): Manifest[] {
  return (loadAll(text) as unknown[]).filter((d): d is Manifest => !!d && typeof d === 'object');
}

/**
 * The least a keystone install needs besides the defaults: OpenStack credentials (here a Secret of OS_*
 * variables). Without any, the chart stops the render (templates/_helpers.tpl requireKeystoneCredentials).
 */
export const MINIMAL_VALUES = { openstack: { envSecret: 'masakari-os-env' } };

/** `helm template` of the defaults plus MINIMAL_VALUES, then values (files written from objects). */
export function renderChart(release: string, namespace: string, values: object[] = [], extra: string[] = []) {
  return renderChartBare(release, namespace, [MINIMAL_VALUES, ...values], extra);
}

/** `helm template <release> charts/masakari-operator -n <namespace>` with values files written from objects. */
export async function renderChartBare(release: string, namespace: string, values: object[] = [], extra: string[] = []) {
  const dir = mkdtempSync(join(tmpdir(), 'masakari-values-'));
  try {
    const files = values.map((v, i) => {
      const file = join(dir, `values-${i}.yaml`);
      writeFileSync(file, dump(v));
      return ['-f', file];
    });
    const r = await helm(['template', release, CHART, '--namespace', namespace, ...files.flat(), ...extra]);
    return { ...r, manifests: r.code === 0 ? parseManifests(r.stdout) : [] };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * `kubectl kustomize config/default`, optionally with the webhook component
 * enabled the way docs/install.md says: uncommented in (a copy of)
 * config/default, so the prefix and namespace apply to it too. The copy sits
 * in a temporary directory with its ../<dir> references made relative to it.
 */
export async function renderKustomize(opts: { webhook?: boolean } = {}) {
  let dir = join(CONFIG, 'default');
  let copy: string | undefined;
  if (opts.webhook) {
    copy = mkdtempSync(join(tmpdir(), 'masakari-kustomize-'));
    cpSync(dir, copy, { recursive: true });
    const file = join(copy, 'kustomization.yaml');
    const original = readFileSync(file, 'utf8');
    if (!original.includes('# components:\n#   - ../webhook')) {
      throw new Error('config/default no longer has the commented webhook component');
    }
    const up = relative(copy, CONFIG);
    const text = original
      .replace('# components:\n#   - ../webhook', 'components:\n  - ../webhook')
      .replace(/^( +- )\.\.\/(\w+)$/gm, (_, item: string, sub: string) => `${item}${up}/${sub}`);
    writeFileSync(file, text);
    dir = copy;
  }
  try {
    const r = await run(await kubectlBinary(), ['kustomize', dir], HELM_TIMEOUT_MS);
    return { ...r, manifests: r.code === 0 ? parseManifests(r.stdout) : [] };
  } finally {
    if (copy) rmSync(copy, { recursive: true, force: true });
  }
}

export const isNamespaced = (m: Manifest): boolean => !CLUSTER_SCOPED_KINDS.has(m.kind);
const CLUSTER_SCOPED_KINDS = new Set([
  'Namespace',
  'CustomResourceDefinition',
  'ClusterRole',
  'ClusterRoleBinding',
  'ValidatingWebhookConfiguration',
  'MutatingWebhookConfiguration',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionPolicyBinding',
]);

/**
 * Moves objects of namespace `from` (the kustomize default, masakari) into
 * `to`, with every reference to it (RoleBinding subjects, webhook service),
 * and drops the Namespace object itself.
 */
export function moveNamespace(manifests: Manifest[], from: string, to: string): Manifest[] {
  const moved = structuredClone(manifests).filter((m) => !(m.kind === 'Namespace' && m.metadata.name === from));
  for (const m of moved) {
    if (m.metadata.namespace === from) m.metadata.namespace = to;
    for (const s of (m.subjects as { namespace?: string }[] | undefined) ?? []) {
      if (s.namespace === from) s.namespace = to;
    }
    for (const w of (m.webhooks as { clientConfig?: { service?: { namespace?: string } } }[] | undefined) ?? []) {
      if (w.clientConfig?.service?.namespace === from) w.clientConfig.service.namespace = to;
    }
  }
  return moved;
}

export const toYaml = (manifests: Manifest[]): string => manifests.map((m) => dump(m)).join('---\n');

/**
 * `kubectl apply --server-side --dry-run=server -f -`: the API server validates
 * and admits, nothing is stored. No --namespace: every namespaced object names
 * its own (some go to the Medik8s lease namespace); one that does not is an error.
 * --force-conflicts: the control plane's CRDs belong to another field manager,
 * and a CRD upgrade takes them over the same way (docs/install.md).
 */
export function dryRunApply(ns: TestNamespace, manifests: Manifest[]): Promise<KubectlResult> {
  const unplaced = manifests.filter((m) => isNamespaced(m) && !m.metadata.namespace);
  if (unplaced.length) {
    throw new Error(`objects without a namespace: ${unplaced.map((m) => `${m.kind}/${m.metadata.name}`).join(', ')}`);
  }
  return runKubectl(
    ns.kubeconfigPath,
    ['apply', '--server-side', '--force-conflicts', '--dry-run=server', '--field-manager=packaging-test', '-f', '-'],
    toYaml(manifests),
  );
}

/** Creates a namespace unless it exists (e.g. medik8s-leases, which NodeHealthCheck would create). */
export async function ensureNamespace(ns: TestNamespace, name: string): Promise<void> {
  const r = await ns.kubectl(['create', 'namespace', name]);
  if (r.code !== 0 && !r.stderr.includes('AlreadyExists')) throw new Error(`create namespace ${name}: ${r.stderr}`);
}

export const byKind = (manifests: Manifest[], kind: string): Manifest[] => manifests.filter((m) => m.kind === kind);

export function find(manifests: Manifest[], kind: string, name: string): Manifest {
  const m = manifests.find((x) => x.kind === kind && x.metadata.name === name);
  if (!m)
    throw new Error(`no ${kind} ${name} among: ${manifests.map((x) => `${x.kind}/${x.metadata.name}`).join(', ')}`);
  return m;
}
