// What the operator's ServiceAccounts may do on the running cluster, asked
// of the API server itself (SubjectAccessReview: the same authorizer a pod's
// request meets), in one kubectl call for the whole table. Compared with
// REQUIRED_PERMISSIONS, the table of what src/ calls, so a verb missing from
// the deployed RBAC fails here as it would fail in the pod.
import { REQUIRED_PERMISSIONS, type Scope, type Subject } from '../../integration/packaging/rbac-model.ts';
import { kubectl } from './tools.ts';

export interface DeployedAccounts {
  /** Namespace of the ServiceAccounts (and of the Masakari objects). */
  namespace: string;
  serviceAccounts: Record<Subject, string>;
  /** Namespace of the Medik8s node leases; undefined when the install does not grant them. */
  leaseNamespace?: string;
  /** Namespace of the admission key Secret ([operator] admission_key_namespace); default `namespace`. */
  keyNamespace?: string;
}

export interface Question {
  serviceAccount: string;
  namespace?: string;
  group: string;
  resource: string;
  subresource?: string;
  /** One object (a rule with resourceNames grants only that). */
  name?: string;
  verb: string;
}

const describe = (q: Question): string =>
  `${q.serviceAccount} ${q.verb} ${q.group || 'core'}/${q.resource}${q.subresource ? `/${q.subresource}` : ''}` +
  (q.name ? ` ${q.name}` : '') +
  (q.namespace ? ` in ${q.namespace}` : ' cluster-wide');

/** Asks the API server each question as the ServiceAccount; returns the allowed ones, described. */
export async function allowed(accountNamespace: string, questions: Question[]): Promise<Set<string>> {
  const reviews = questions.map((q) => ({
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SubjectAccessReview',
    spec: {
      user: `system:serviceaccount:${accountNamespace}:${q.serviceAccount}`,
      groups: ['system:serviceaccounts', `system:serviceaccounts:${accountNamespace}`, 'system:authenticated'],
      resourceAttributes: {
        namespace: q.namespace,
        verb: q.verb,
        group: q.group,
        resource: q.resource,
        subresource: q.subresource,
        name: q.name,
      },
    },
  }));
  // kubectl prints one line per review, in the order sent
  const out = await kubectl(['create', '-f', '-', '-o', 'jsonpath={.status.allowed}{"\\n"}'], {
    input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: reviews }),
  });
  const answers = out.trim().split('\n');
  if (answers.length !== questions.length)
    throw new Error(`${questions.length} access reviews, ${answers.length} answers: ${out}`);
  return new Set(questions.filter((_, i) => answers[i] === 'true').map(describe));
}

/** Every right REQUIRED_PERMISSIONS lists, as questions about the deployed ServiceAccounts. */
export function requiredQuestions(accounts: DeployedAccounts): Question[] {
  const namespaceOf = (scope: Scope): string | undefined | null =>
    scope === 'crNamespace'
      ? accounts.namespace
      : scope === 'keyNamespace'
        ? (accounts.keyNamespace ?? accounts.namespace)
        : scope === 'leaseNamespace'
          ? (accounts.leaseNamespace ?? null)
          : undefined;
  const out: Question[] = [];
  for (const p of REQUIRED_PERMISSIONS) {
    const namespace = namespaceOf(p.scope);
    if (namespace === null) continue; // the install leaves the Medik8s lease Role out on purpose
    const [resource, subresource] = p.resource.split('/') as [string, string | undefined];
    for (const subject of p.subjects) {
      for (const name of p.resourceNames ?? [undefined]) {
        for (const verb of p.verbs) {
          out.push({
            serviceAccount: accounts.serviceAccounts[subject],
            namespace,
            group: p.apiGroup,
            resource,
            subresource,
            ...(name ? { name } : {}),
            verb,
          });
        }
      }
    }
  }
  return out;
}

/** The rights the code needs that the deployed RBAC does not give (empty when all is granted). */
export async function missingRights(accounts: DeployedAccounts): Promise<string[]> {
  const questions = requiredQuestions(accounts);
  const yes = await allowed(accounts.namespace, questions);
  return questions.map(describe).filter((d) => !yes.has(d));
}

/**
 * Whether REQUIRED_PERMISSIONS gives `serviceAccount` `verb` on every Secret of the objects' namespace
 * (today: the controller's get, for the BMC credentials of HaHost spec.fencing).
 */
export function readsSecrets(accounts: DeployedAccounts, serviceAccount: string, verb: string): boolean {
  return requiredQuestions(accounts).some(
    (q) =>
      q.serviceAccount === serviceAccount &&
      q.namespace === accounts.namespace &&
      q.group === '' &&
      q.resource === 'secrets' &&
      !q.name &&
      q.verb === verb,
  );
}

/**
 * Rights nobody should have granted them: reading Secrets beyond what REQUIRED_PERMISSIONS lists (the
 * admission key; the controller's get in the objects' namespace for BMC credentials), and anything on everything.
 */
export async function forbiddenRights(accounts: DeployedAccounts): Promise<string[]> {
  const questions: Question[] = [];
  for (const sa of Object.values(accounts.serviceAccounts)) {
    for (const verb of ['get', 'list', 'watch']) {
      questions.push({ serviceAccount: sa, namespace: accounts.namespace, group: '', resource: 'secrets', verb });
      questions.push({ serviceAccount: sa, group: '', resource: 'secrets', verb });
    }
    questions.push({ serviceAccount: sa, group: '*', resource: '*', verb: '*' });
    questions.push({ serviceAccount: sa, namespace: accounts.namespace, group: '*', resource: '*', verb: '*' });
  }
  const required = new Set(requiredQuestions(accounts).map(describe));
  return [...(await allowed(accounts.namespace, questions))].filter((d) => !required.has(d)).sort();
}
