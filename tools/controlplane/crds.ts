// Installs the CustomResourceDefinitions from a directory and waits until the
// API server serves them: Established and NamesAccepted, and every served
// version listed in discovery (the check envtest makes; a CRD can be
// Established a moment before discovery shows it). Also installs the
// ValidatingAdmissionPolicies of config/policy (installPolicies), which guard
// the Masakari objects as on a real cluster.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadAll } from 'js-yaml';
import { httpRequest, waitUntil } from './http.ts';

const CRD_PATH = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

export interface CrdManifest {
  apiVersion: string;
  kind: 'CustomResourceDefinition';
  metadata: { name: string; resourceVersion?: string };
  spec: {
    group: string;
    names: { plural: string; kind: string };
    versions: { name: string; served: boolean }[];
  };
}

/** Every CustomResourceDefinition document in *.yaml / *.yml / *.json files of dir (other kinds are skipped). */
export function loadCrds(dir: string): CrdManifest[] {
  const files = readdirSync(dir)
    .filter((f) => /\.(ya?ml|json)$/.test(f))
    .sort();
  const crds: CrdManifest[] = [];
  for (const file of files) {
    for (const doc of loadAll(readFileSync(join(dir, file), 'utf8'))) {
      const obj = doc as Partial<CrdManifest> | null;
      if (obj?.kind === 'CustomResourceDefinition') crds.push(obj as CrdManifest);
    }
  }
  return crds;
}

export interface ApiTarget {
  server: string;
  ca: string;
  token: string;
}

function fail(what: string, res: { status: number; body: string }): Error {
  return new Error(`${what}: HTTP ${res.status}: ${res.body.slice(0, 2000)}`);
}

/** Create, or replace (compare-and-swap on resourceVersion, retried on conflict). */
async function createOrReplace(api: ApiTarget, crd: CrdManifest): Promise<void> {
  const auth = { ca: api.ca, token: api.token };
  for (let attempt = 0; attempt < 5; attempt++) {
    const created = await httpRequest(`${api.server}${CRD_PATH}`, { ...auth, method: 'POST', body: crd });
    if (created.status === 201) return;
    if (created.status !== 409) throw fail(`creating CRD ${crd.metadata.name}`, created);
    const current = await httpRequest(`${api.server}${CRD_PATH}/${crd.metadata.name}`, auth);
    if (current.status === 404) continue; // deleted meanwhile: create again
    if (current.status !== 200) throw fail(`reading CRD ${crd.metadata.name}`, current);
    const resourceVersion = (JSON.parse(current.body) as CrdManifest).metadata.resourceVersion;
    const body = { ...crd, metadata: { ...crd.metadata, resourceVersion } };
    const replaced = await httpRequest(`${api.server}${CRD_PATH}/${crd.metadata.name}`, {
      ...auth,
      method: 'PUT',
      body,
    });
    if (replaced.status === 200) return;
    if (replaced.status !== 409) throw fail(`updating CRD ${crd.metadata.name}`, replaced);
  }
  throw new Error(`CRD ${crd.metadata.name}: still conflicting after 5 attempts`);
}

interface CrdStatus {
  status?: { conditions?: { type: string; status: string; message?: string }[] };
}

async function waitServed(api: ApiTarget, crd: CrdManifest, timeoutMs: number): Promise<void> {
  const auth = { ca: api.ca, token: api.token };
  await waitUntil(
    `CRD ${crd.metadata.name} to be Established`,
    async () => {
      const res = await httpRequest(`${api.server}${CRD_PATH}/${crd.metadata.name}`, auth);
      if (res.status !== 200) throw fail('reading CRD', res);
      const conditions = (JSON.parse(res.body) as CrdStatus).status?.conditions ?? [];
      const isTrue = (t: string) => conditions.some((c) => c.type === t && c.status === 'True');
      const rejected = conditions.find((c) => c.type === 'NamesAccepted' && c.status === 'False');
      if (rejected) throw new Error(`CRD ${crd.metadata.name} names not accepted: ${rejected.message}`);
      return isTrue('Established') && isTrue('NamesAccepted') ? true : undefined;
    },
    { timeoutMs },
  );
  for (const version of crd.spec.versions.filter((v) => v.served)) {
    await waitUntil(
      `${crd.spec.group}/${version.name} ${crd.spec.names.plural} in discovery`,
      async () => {
        const res = await httpRequest(`${api.server}/apis/${crd.spec.group}/${version.name}`, auth);
        if (res.status !== 200) return undefined; // group not aggregated yet
        const list = JSON.parse(res.body) as { resources?: { name: string }[] };
        return list.resources?.some((r) => r.name === crd.spec.names.plural) ? true : undefined;
      },
      { timeoutMs },
    );
  }
}

/** Installs every CRD in dir and waits until all are served. Returns their names. */
export async function installCrds(api: ApiTarget, dir: string, timeoutMs = 30_000): Promise<string[]> {
  const crds = loadCrds(dir);
  for (const crd of crds) await createOrReplace(api, crd);
  for (const crd of crds) await waitServed(api, crd, timeoutMs);
  return crds.map((c) => c.metadata.name);
}

const POLICY_PATHS: Record<string, string> = {
  ValidatingAdmissionPolicy: '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies',
  ValidatingAdmissionPolicyBinding: '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings',
};

interface PolicyManifest {
  kind: string;
  metadata: { name: string; resourceVersion?: string };
}

/**
 * Creates or replaces every ValidatingAdmissionPolicy(Binding) in *.yaml of
 * dir (other documents, e.g. a kustomization, are skipped), policies before
 * bindings. Returns their names. The API server enforces a policy from the
 * moment its binding exists (its type check runs in the background; a policy
 * that fails it is reported in status.typeChecking, not here).
 */
export async function installPolicies(api: ApiTarget, dir: string): Promise<string[]> {
  const auth = { ca: api.ca, token: api.token };
  const docs: PolicyManifest[] = [];
  for (const file of readdirSync(dir)
    .filter((f) => /\.ya?ml$/.test(f))
    .sort()) {
    for (const doc of loadAll(readFileSync(join(dir, file), 'utf8'))) {
      const obj = doc as PolicyManifest | null;
      if (obj && POLICY_PATHS[obj.kind]) docs.push(obj);
    }
  }
  docs.sort((a, b) => Number(a.kind.endsWith('Binding')) - Number(b.kind.endsWith('Binding')));
  for (const doc of docs) {
    const path = `${api.server}${POLICY_PATHS[doc.kind]}`;
    const created = await httpRequest(path, { ...auth, method: 'POST', body: doc });
    if (created.status === 201) continue;
    if (created.status !== 409) throw fail(`creating ${doc.kind} ${doc.metadata.name}`, created);
    const current = await httpRequest(`${path}/${doc.metadata.name}`, auth);
    if (current.status !== 200) throw fail(`reading ${doc.kind} ${doc.metadata.name}`, current);
    const resourceVersion = (JSON.parse(current.body) as PolicyManifest).metadata.resourceVersion;
    const replaced = await httpRequest(`${path}/${doc.metadata.name}`, {
      ...auth,
      method: 'PUT',
      body: { ...doc, metadata: { ...doc.metadata, resourceVersion } },
    });
    if (replaced.status !== 200) throw fail(`updating ${doc.kind} ${doc.metadata.name}`, replaced);
  }
  return docs.map((d) => `${d.kind}/${d.metadata.name}`);
}
