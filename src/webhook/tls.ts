// The webhook's serving certificate. In a cluster it comes from files
// (tls.crt, tls.key of a kubernetes.io/tls Secret mounted at
// MASAKARI_WEBHOOK_CERT_DIR), re-read periodically so a rotated certificate
// (cert-manager renewals; the kubelet swaps Secret volumes atomically) is
// served without a restart. For `make run` and tests, a throwaway CA and a
// certificate for 127.0.0.1/localhost are made at start (self-signed.ts); the
// CA PEM goes into the ValidatingWebhookConfiguration's caBundle.
import { join } from 'node:path';
import type { KeyPairSource } from '../net/key-pair.ts';

export type { KeyPair } from '../net/key-pair.ts';

export const CERT_FILE = 'tls.crt';
export const KEY_FILE = 'tls.key';

/** tls.crt and tls.key in the directory, read and watched by net/key-pair.ts. */
export const webhookKeyPairSource = (dir: string): KeyPairSource => ({
  certFile: join(dir, CERT_FILE),
  keyFile: join(dir, KEY_FILE),
  owner: 'webhook',
  describe: `${CERT_FILE} and ${KEY_FILE} in ${dir}`,
});
