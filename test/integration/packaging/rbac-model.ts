// What the operator's code needs from the Kubernetes API, and what a set of
// RBAC manifests actually grants to its ServiceAccounts. rbac.test.ts checks
// that the chart and the kustomize config grant exactly REQUIRED_PERMISSIONS:
// a new call in src/ needs a row here and a rule in both (or the test fails),
// and a rule nobody needs fails the test too.
import type { Manifest } from './tools.ts';

/** api: the Masakari API facade (component api). controller: engine + remediation. */
export type Subject = 'api' | 'controller';
/**
 * Where a permission applies: the namespace of the Masakari objects
 * (MASAKARI_NAMESPACE), the namespace of the admission key
 * (MASAKARI_ADMISSION_KEY_NAMESPACE: the chart's release namespace), the
 * Medik8s node-lease namespace, or cluster-wide.
 */
export type Scope = 'crNamespace' | 'keyNamespace' | 'leaseNamespace' | 'cluster';

export interface Permission {
  subjects: Subject[];
  scope: Scope;
  apiGroup: string;
  resource: string;
  verbs: string[];
  /** Only these objects (RBAC resourceNames); a grant then reads "<resource>/<name>". */
  resourceNames?: string[];
  /** Where the code makes the call. */
  why: string;
}

const MASAKARI = 'masakari.openkeel.io';
const BOTH: Subject[] = ['api', 'controller'];
const KINDS = ['failoversegments', 'hahosts', 'notifications'];

export const REQUIRED_PERMISSIONS: Permission[] = [
  ...KINDS.map((resource) => ({
    subjects: BOTH,
    scope: 'crNamespace' as const,
    apiGroup: MASAKARI,
    resource,
    verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
    why:
      'informers (src/store/caches.ts, src/runtime/informer.ts: list, watch); src/store/repository.ts ' +
      '(create, replace = update, mergePatch = patch); src/store/lifecycle.ts (get, list, delete, finalizer patch); ' +
      'src/reconcilers/admission.ts (patch). The API runs the store reconcilers, the engine reads through the same store.',
  })),
  ...KINDS.map((resource) => ({
    subjects: BOTH,
    scope: 'crNamespace' as const,
    apiGroup: MASAKARI,
    resource: `${resource}/status`,
    verbs: ['update', 'patch'],
    why:
      'replaceStatus (update): src/engine/run/ha-host-flags.ts; jsonPatch with status (patch): src/engine/status/writer.ts, ' +
      'src/engine/run/claim.ts; mergePatch with status (patch): src/store/repository.ts, src/reconcilers/admission.ts',
  })),
  {
    subjects: BOTH,
    scope: 'crNamespace',
    apiGroup: '',
    resource: 'configmaps',
    verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
    why:
      'name claims (src/store/claims.ts: create, get, list for the sweep, patch, delete), id sequences ' +
      '(src/store/ids.ts: get, create, replace = update), duplicate claims (src/store/admission/duplicate-claim.ts: create, get, ' +
      'replace = update, delete; list for the sweep), ' +
      'journal pages (src/store/journal-pages.ts, src/store/caches.ts: list, watch, delete; src/engine/status/writer.ts: create, replace = update)',
  },
  {
    subjects: BOTH,
    scope: 'keyNamespace',
    apiGroup: '',
    resource: 'secrets',
    resourceNames: ['masakari-admission-seal'],
    verbs: ['get'],
    why:
      'the admission key (src/store/admission/seal.ts loadAdmissionSealKey), read by every process at start ' +
      '(src/app/run.ts); no other Secret',
  },
  {
    subjects: BOTH,
    scope: 'keyNamespace',
    apiGroup: '',
    resource: 'secrets',
    verbs: ['create'],
    why: 'the admission key, created by the first process when absent (RBAC cannot restrict create by name)',
  },
  {
    subjects: BOTH,
    scope: 'crNamespace',
    apiGroup: 'coordination.k8s.io',
    resource: 'leases',
    verbs: ['get', 'create', 'update'],
    why:
      'src/runtime/leaderelection.ts, client-go algorithm (get, create on 404, replace): masakari-engine ' +
      '(src/engine/engine.ts), masakari-store-reconcilers (src/reconcilers/component.ts), the remediator (src/remediation/component.ts)',
  },
  {
    subjects: ['controller'],
    scope: 'crNamespace',
    apiGroup: '',
    resource: 'secrets',
    verbs: ['get'],
    why:
      'the BMC credentials (and CA) of HaHost spec.fencing, read by the engine at each fence attempt ' +
      '(src/fencing/bmc/factory.ts bmcForHost); Secret names are chosen per host, so not limited by name',
  },
  {
    subjects: ['controller'],
    scope: 'crNamespace',
    apiGroup: 'events.k8s.io',
    resource: 'events',
    verbs: ['create', 'patch'],
    why: 'src/runtime/events.ts EventRecorder (create, then mergePatch for a series): engine, remediator (the api writes none)',
  },
  {
    subjects: ['controller'],
    scope: 'crNamespace',
    apiGroup: MASAKARI,
    resource: 'masakariremediations',
    verbs: ['list', 'watch', 'patch'],
    why:
      'src/remediation/component.ts (informer: list, watch), src/fencing/proof.ts (list), ' +
      'src/runtime/finalizers.ts via src/remediation/reconciler.ts (finalizer JSON patch)',
  },
  {
    subjects: ['controller'],
    scope: 'crNamespace',
    apiGroup: MASAKARI,
    resource: 'masakariremediations/status',
    verbs: ['update'],
    why: 'src/remediation/reconciler.ts replaceStatus: Processing, Succeeded, FencingVerified conditions',
  },
  {
    subjects: ['controller'],
    scope: 'cluster',
    apiGroup: '',
    resource: 'nodes',
    verbs: ['get', 'list', 'watch'],
    why:
      'src/remediation/reconciler.ts (get the remediated node), src/fencing/node-directory.ts ' +
      "(the engine's fencing gate: a Node cache, list + watch)",
  },
  {
    subjects: ['controller'],
    scope: 'cluster',
    apiGroup: 'fence-agents-remediation.medik8s.io',
    resource: 'fenceagentsremediations',
    verbs: ['list'],
    why: 'src/fencing/proof.ts readEvidence: list in all namespaces, FenceAgentActionSucceeded=True proves fencing',
  },
  {
    subjects: ['controller'],
    scope: 'cluster',
    apiGroup: 'self-node-remediation.medik8s.io',
    resource: 'selfnoderemediations',
    verbs: ['list'],
    why: 'src/fencing/proof.ts readEvidence: list in all namespaces, timeAssumedRebooted proves fencing',
  },
  {
    subjects: ['controller'],
    scope: 'cluster',
    apiGroup: 'admissionregistration.k8s.io',
    resource: 'validatingadmissionpolicybindings',
    verbs: ['get'],
    why:
      'src/fencing/approval-guard.ts: the binding of the safety-overrides policy; without it a fencing-approved-by ' +
      'is not honoured (engine gate, remediator)',
  },
  {
    subjects: ['controller'],
    scope: 'leaseNamespace',
    apiGroup: 'coordination.k8s.io',
    resource: 'leases',
    verbs: ['get'],
    why: 'src/remediation/lease.ts: node-<name> in medik8s-leases; a node held by Node Maintenance is left alone',
  },
];

/** A resource, or each of its named objects ("<resource>/<name>") when a rule names them. */
const named = (resource: string, names: string[] | undefined): string[] =>
  names?.length ? names.map((n) => `${resource}/${n}`) : [resource];

/**
 * One granted or required right, as "<subject> <where> <group>/<resource> <verb>", where is a
 * namespace name or "cluster" (two scopes may be one namespace, e.g. the chart's default).
 */
export type Grant = string;
const grant = (subject: Subject, where: string, apiGroup: string, resource: string, verb: string): Grant =>
  `${subject} ${where} ${apiGroup || 'core'}/${resource} ${verb}`;

export function requiredGrants(layout: RbacLayout): Set<Grant> {
  const out = new Set<Grant>();
  for (const p of REQUIRED_PERMISSIONS) {
    const where = p.scope === 'cluster' ? 'cluster' : layout.namespaces[p.scope];
    for (const s of p.subjects) {
      for (const r of named(p.resource, p.resourceNames)) {
        for (const v of p.verbs) out.add(grant(s, where, p.apiGroup, r, v));
      }
    }
  }
  return out;
}

export interface PolicyRule {
  apiGroups?: string[];
  resources?: string[];
  verbs?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}
interface RoleRef {
  kind: string;
  name: string;
}
interface RbacSubject {
  kind: string;
  name: string;
  namespace?: string;
}

export interface RbacLayout {
  /** ServiceAccount names and the namespace they live in. */
  serviceAccounts: Record<Subject, string>;
  saNamespace: string;
  /** Namespace name of each namespaced scope. */
  namespaces: { crNamespace: string; keyNamespace: string; leaseNamespace: string };
}

/**
 * Every right the manifests' bindings give the two ServiceAccounts. Throws on
 * anything the analysis cannot vouch for: a binding to a role the manifests do
 * not define (for example a built-in one), a role in an unexpected namespace,
 * an aggregated ClusterRole or nonResourceURLs. A rule with resourceNames
 * grants "<resource>/<name>" only.
 */
export function effectiveGrants(manifests: Manifest[], layout: RbacLayout): Set<Grant> {
  const whereOf = (namespace: string | undefined): string => {
    if (namespace && Object.values(layout.namespaces).includes(namespace)) return namespace;
    throw new Error(`RBAC object in unexpected namespace ${namespace ?? '(none)'}`);
  };
  const subjectOf = (s: RbacSubject): Subject | undefined => {
    if (s.kind !== 'ServiceAccount') throw new Error(`binding subject of kind ${s.kind} (${s.name})`);
    if (s.namespace !== layout.saNamespace) return undefined;
    return (Object.keys(layout.serviceAccounts) as Subject[]).find((k) => layout.serviceAccounts[k] === s.name);
  };
  const rulesOf = (ref: RoleRef, bindingNamespace: string | undefined): PolicyRule[] => {
    const role = manifests.find(
      (m) =>
        m.kind === ref.kind &&
        m.metadata.name === ref.name &&
        (ref.kind === 'ClusterRole' || m.metadata.namespace === bindingNamespace),
    );
    if (!role) throw new Error(`binding to ${ref.kind} ${ref.name} that the manifests do not define`);
    if (role.aggregationRule) throw new Error(`${ref.kind} ${ref.name} is aggregated; its rules are not visible here`);
    const rules = (role.rules as PolicyRule[] | undefined) ?? [];
    for (const r of rules) {
      if (r.nonResourceURLs?.length) {
        throw new Error(`${ref.kind} ${ref.name}: rules with nonResourceURLs are not modelled`);
      }
    }
    return rules;
  };

  const out = new Set<Grant>();
  const add = (subject: Subject, where: string, rules: PolicyRule[]) => {
    for (const r of rules) {
      for (const g of r.apiGroups ?? []) {
        for (const res of r.resources ?? []) {
          for (const one of named(res, r.resourceNames)) {
            for (const v of r.verbs ?? []) out.add(grant(subject, where, g, one, v));
          }
        }
      }
    }
  };
  for (const b of manifests.filter((m) => m.kind === 'RoleBinding' || m.kind === 'ClusterRoleBinding')) {
    const ref = b.roleRef as RoleRef;
    const subjects = ((b.subjects as RbacSubject[] | undefined) ?? []).map(subjectOf);
    if (!subjects.some(Boolean)) continue;
    const where = b.kind === 'ClusterRoleBinding' ? 'cluster' : whereOf(b.metadata.namespace);
    const rules = rulesOf(ref, b.metadata.namespace);
    for (const s of subjects) if (s) add(s, where, rules);
  }
  return out;
}

/** Rules of every Role and ClusterRole that use a wildcard ('*') anywhere. */
export function wildcardRules(manifests: Manifest[]): string[] {
  const found: string[] = [];
  for (const role of manifests.filter((m) => m.kind === 'Role' || m.kind === 'ClusterRole')) {
    for (const r of (role.rules as PolicyRule[] | undefined) ?? []) {
      const all = [...(r.apiGroups ?? []), ...(r.resources ?? []), ...(r.verbs ?? []), ...(r.nonResourceURLs ?? [])];
      if (all.some((x) => x.includes('*'))) found.push(`${role.kind} ${role.metadata.name}: ${JSON.stringify(r)}`);
    }
  }
  return found;
}

/** Set difference, sorted, for readable assertion messages. */
export const minus = (a: Set<Grant>, b: Set<Grant>): Grant[] => [...a].filter((x) => !b.has(x)).sort();
