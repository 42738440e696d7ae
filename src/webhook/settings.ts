// Where the webhook listens and where its certificate is, from the
// environment the chart and kustomize set on the api pods:
//   MASAKARI_WEBHOOK_LISTEN    host:port (e.g. 0.0.0.0:9443); unset: no webhook
//   MASAKARI_WEBHOOK_CERT_DIR  directory with tls.crt and tls.key; unset: a
//                              self-signed certificate for 127.0.0.1 (local runs)
import { readFileSync } from 'node:fs';
import { splitHostPort } from '../config/parsers.ts';

export interface WebhookSettings {
  listen: { host: string; port: number };
  certDir?: string;
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
  return certDir ? { listen: address, certDir } : { listen: address };
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
