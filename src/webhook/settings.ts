// Where the webhook listens and where its certificate is, from the
// environment the chart and kustomize set on the api pods:
//   MASAKARI_WEBHOOK_LISTEN    host:port (e.g. 0.0.0.0:9443); unset: no webhook
//   MASAKARI_WEBHOOK_CERT_DIR  directory with tls.crt and tls.key; unset: a
//                              self-signed certificate for 127.0.0.1 (local runs)
//   MASAKARI_WEBHOOK_OPERATOR_USERS
//                              comma-separated user names the operator's writes
//                              also carry, besides the pod's own service account
//                              (local runs: the control plane's admin)
import { readFileSync } from 'node:fs';
import { splitHostPort } from '../config/parsers.ts';
import type { KubeClient, ResourceRef } from '../k8s/client.ts';

export interface WebhookSettings {
  listen: { host: string; port: number };
  certDir?: string;
  /** More identities of the operator's own components (see TrustPolicy.operatorUsers); the pod's service account is always one. */
  operatorUsers?: string[];
}

/** The settings, undefined when MASAKARI_WEBHOOK_LISTEN is unset; throws on a malformed value. */
export function webhookSettingsFromEnv(env: NodeJS.ProcessEnv): WebhookSettings | undefined {
  const listen = env.MASAKARI_WEBHOOK_LISTEN?.trim();
  if (!listen) return undefined;
  const address = splitHostPort(listen);
  if (!address) {
    throw new Error(
      `MASAKARI_WEBHOOK_LISTEN must be host:port with a port between 1 and 65535, got ${JSON.stringify(listen)}`,
    );
  }
  const certDir = env.MASAKARI_WEBHOOK_CERT_DIR?.trim();
  const operatorUsers = parseUserList(env.MASAKARI_WEBHOOK_OPERATOR_USERS);
  return {
    listen: address,
    ...(certDir ? { certDir } : {}),
    ...(operatorUsers.length ? { operatorUsers } : {}),
  };
}

/** "a, b,,c" → ["a", "b", "c"]: user names never start or end with blanks, and an empty entry names nobody. */
function parseUserList(value: string | undefined): string[] {
  return [...new Set((value ?? '').split(',').map((name) => name.trim()))].filter((name) => name !== '');
}

const SA_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

/**
 * The user name the API server knows this pod as (system:serviceaccount:<ns>:<name>),
 * from the `sub` claim of its service-account token; undefined outside a pod.
 * The token is only decoded, not verified: it names ourselves, to ourselves.
 */
export function serviceAccountUsername(tokenPath = SA_TOKEN): string | undefined {
  let token: string;
  try {
    token = readFileSync(tokenPath, 'utf8').trim();
  } catch {
    return undefined;
  }
  const payload = token.split('.')[1];
  if (!payload) return undefined;
  try {
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { sub?: unknown };
    return typeof claims.sub === 'string' && claims.sub.startsWith('system:serviceaccount:') ? claims.sub : undefined;
  } catch {
    return undefined;
  }
}

const SELF_SUBJECT_REVIEWS: ResourceRef = {
  group: 'authentication.k8s.io',
  version: 'v1',
  plural: 'selfsubjectreviews',
  namespaced: false,
};

/**
 * The user name the API server puts on this client's requests (a
 * SelfSubjectReview, Kubernetes 1.28+): what the webhook sees as
 * request.userInfo.username for the operator's writes when it runs outside a
 * pod with a kubeconfig (local runs), to be listed in MASAKARI_WEBHOOK_OPERATOR_USERS.
 */
export async function kubeUsername(kube: KubeClient): Promise<string> {
  const review = await kube.create<SelfSubjectReview>(SELF_SUBJECT_REVIEWS, undefined, {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'SelfSubjectReview',
  });
  const username = review.status?.userInfo?.username;
  if (!username) throw new Error('the API server did not say who this kubeconfig authenticates as (SelfSubjectReview)');
  return username;
}

interface SelfSubjectReview {
  apiVersion: 'authentication.k8s.io/v1';
  kind: 'SelfSubjectReview';
  status?: { userInfo?: { username?: string } };
}
