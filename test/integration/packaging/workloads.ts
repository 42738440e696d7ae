// Readers for the rendered workloads, shared by chart.test.ts and
// kustomize.test.ts: the container of a Deployment, its environment as the
// process would see it, and the restricted-pod checks both packagings must pass.
import * as assert from 'uvu/assert';
import { loadConfig } from '../../../src/config/load.ts';
import type { LoadedConfig } from '../../../src/config/load.ts';
import type { Manifest } from './tools.ts';

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { fieldRef?: { fieldPath: string }; secretKeyRef?: { name: string; key: string } };
}
export interface Container {
  name: string;
  image: string;
  args?: string[];
  ports?: { name: string; containerPort: number }[];
  env?: EnvVar[];
  envFrom?: { secretRef?: { name: string; optional?: boolean }; configMapRef?: { name: string } }[];
  readinessProbe?: { httpGet?: { path: string; port: string | number } };
  livenessProbe?: { httpGet?: { path: string; port: string | number } };
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: Record<string, unknown>;
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
}
export interface PodSpec {
  serviceAccountName?: string;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: Record<string, unknown>;
  containers: Container[];
  volumes?: { name: string; configMap?: { name: string }; secret?: { secretName: string }; emptyDir?: object }[];
  terminationGracePeriodSeconds?: number;
}

export const podSpec = (d: Manifest): PodSpec => (d.spec as { template: { spec: PodSpec } }).template.spec;

export function container(d: Manifest): Container {
  const spec = podSpec(d);
  assert.is(spec.containers.length, 1, `${d.metadata.name}: one container`);
  return spec.containers[0]!;
}

export function envValue(c: Container, name: string): string | undefined {
  return c.env?.find((e) => e.name === name)?.value;
}

/** The container port a probe's named port resolves to. */
export function probePort(c: Container, probe: 'readinessProbe' | 'livenessProbe'): number | undefined {
  const port = c[probe]?.httpGet?.port;
  return typeof port === 'number' ? port : c.ports?.find((p) => p.name === port)?.containerPort;
}

/**
 * Runs the operator's own configuration loader on a rendered container: its
 * literal env values, its --config-file arguments, and the files they name read
 * from the ConfigMap mounted at that path, or from `secrets` (Secret name → key
 * → text) for a mounted Secret the install expects to exist. Throws the
 * loader's ConfigError when the process would refuse to start.
 */
export function loadRenderedConfig(
  d: Manifest,
  manifests: Manifest[],
  secrets: Record<string, Record<string, string>> = {},
): LoadedConfig {
  const c = container(d);
  const env: NodeJS.ProcessEnv = {};
  for (const e of c.env ?? []) if (e.value !== undefined) env[e.name] = e.value;
  // the downward API fills these in a pod
  if (c.env?.some((e) => e.name === 'MASAKARI_NAMESPACE' && e.valueFrom)) {
    env.MASAKARI_NAMESPACE = d.metadata.namespace;
  }
  const readFile = (path: string): string => {
    const mount = c.volumeMounts?.find((m) => path.startsWith(`${m.mountPath}/`));
    const volume = podSpec(d).volumes?.find((v) => v.name === mount?.name);
    const cm = manifests.find((m) => m.kind === 'ConfigMap' && m.metadata.name === volume?.configMap?.name);
    const key = path.slice((mount?.mountPath.length ?? 0) + 1);
    const data = volume?.secret
      ? secrets[volume.secret.secretName]?.[key]
      : (cm?.data as Record<string, string> | undefined)?.[key];
    if (data === undefined) throw new Error(`${path} is not in any mounted ConfigMap or given Secret`);
    return data;
  };
  const args = c.args ?? [];
  const files = args.flatMap((a, i) => (a === '--config-file' && args[i + 1] ? [args[i + 1]!] : []));
  return loadConfig({ env, readFile, files });
}

/** The restricted Pod Security Standard, as the chart and kustomize set it. */
export function assertRestricted(d: Manifest): void {
  const spec = podSpec(d);
  const c = container(d);
  const name = d.metadata.name;
  assert.is(spec.securityContext?.runAsNonRoot, true, `${name}: pod runAsNonRoot`);
  // No fixed UID, GID or fsGroup, in the chart and in kustomize alike: the
  // runtime takes the image's numeric USER (65532), which runAsNonRoot
  // accepts, and OpenShift's restricted-v2 SCC assigns one from the
  // namespace's range (a fixed one outside it is rejected).
  for (const field of ['runAsUser', 'runAsGroup', 'fsGroup'] as const) {
    assert.is(spec.securityContext?.[field], undefined, `${name}: pod ${field} is fixed`);
  }
  assert.equal(spec.securityContext?.seccompProfile, { type: 'RuntimeDefault' }, `${name}: pod seccompProfile`);
  const sc = c.securityContext ?? {};
  assert.is(sc.runAsNonRoot, true, `${name}: runAsNonRoot`);
  assert.is(sc.runAsUser, undefined, `${name}: container runAsUser is fixed`);
  assert.is(sc.runAsGroup, undefined, `${name}: container runAsGroup is fixed`);
  assert.is(sc.readOnlyRootFilesystem, true, `${name}: readOnlyRootFilesystem`);
  assert.is(sc.allowPrivilegeEscalation, false, `${name}: allowPrivilegeEscalation`);
  assert.equal(sc.capabilities, { drop: ['ALL'] }, `${name}: capabilities`);
  assert.equal(sc.seccompProfile, { type: 'RuntimeDefault' }, `${name}: seccompProfile`);
  // a read-only root still needs a writable /tmp
  assert.ok(
    c.volumeMounts?.some((m) => m.mountPath === '/tmp'),
    `${name}: /tmp is mounted`,
  );
  assert.ok((spec.terminationGracePeriodSeconds ?? 30) > 20, `${name}: grace period above shutdown_timeout`);
}

/** Readiness on /readyz and liveness on /healthz, both on the ops port 8081. */
export function assertProbes(d: Manifest): void {
  const c = container(d);
  assert.is(c.readinessProbe?.httpGet?.path, '/readyz', `${d.metadata.name}: readiness path`);
  assert.is(probePort(c, 'readinessProbe'), 8081, `${d.metadata.name}: readiness port`);
  assert.is(c.livenessProbe?.httpGet?.path, '/healthz', `${d.metadata.name}: liveness path`);
  assert.is(probePort(c, 'livenessProbe'), 8081, `${d.metadata.name}: liveness port`);
}
