// The webhook's serving certificate. In a cluster it comes from files
// (tls.crt, tls.key of a kubernetes.io/tls Secret mounted at
// MASAKARI_WEBHOOK_CERT_DIR), re-read periodically so a rotated certificate
// (cert-manager renewals; the kubelet swaps Secret volumes atomically) is
// served without a restart. For `make run` and tests, a throwaway CA and a
// certificate for 127.0.0.1/localhost are made at start (self-signed.ts); the
// CA PEM goes into the ValidatingWebhookConfiguration's caBundle.
import { join } from 'node:path';
import type { Logger } from 'pino';
import { readKeyPairFiles, watchKeyPairFiles, type KeyPair, type KeyPairSource } from '../net/key-pair.ts';

export type { KeyPair } from '../net/key-pair.ts';
export { DEFAULT_CERT_POLL_MS } from '../net/key-pair.ts';

export const CERT_FILE = 'tls.crt';
export const KEY_FILE = 'tls.key';

const sourceOf = (dir: string): KeyPairSource => ({
  certFile: join(dir, CERT_FILE),
  keyFile: join(dir, KEY_FILE),
  owner: 'webhook',
  describe: `${CERT_FILE} and ${KEY_FILE} in ${dir}`,
});

/** Reads tls.crt and tls.key and checks they form a usable pair; throws naming the directory. */
export function readKeyPair(dir: string): Promise<KeyPair> {
  return readKeyPairFiles(sourceOf(dir));
}

/** Polls the directory and calls `onChange` with each new, valid pair (net/key-pair.ts). */
export function watchKeyPair(
  dir: string,
  initial: KeyPair,
  onChange: (pair: KeyPair) => void,
  opts: { log: Logger; pollMs?: number },
): { stop(): void } {
  return watchKeyPairFiles(sourceOf(dir), initial, onChange, opts);
}
