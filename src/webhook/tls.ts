// The webhook's serving certificate. In a cluster it comes from files
// (tls.crt, tls.key of a kubernetes.io/tls Secret mounted at
// MASAKARI_WEBHOOK_CERT_DIR), re-read periodically so a rotated certificate
// (cert-manager renewals; the kubelet swaps Secret volumes atomically) is
// served without a restart. For `make run` and tests, a throwaway CA and a
// certificate for 127.0.0.1/localhost are made at start (self-signed.ts); the
// CA PEM goes into the ValidatingWebhookConfiguration's caBundle.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createSecureContext } from 'node:tls';
import type { Logger } from 'pino';

export interface KeyPair {
  cert: string;
  key: string;
}

export const CERT_FILE = 'tls.crt';
export const KEY_FILE = 'tls.key';
/** Kubelet refreshes mounted Secrets within about a minute; polling every 10 s adds little to that. */
export const DEFAULT_CERT_POLL_MS = 10_000;

/** Reads tls.crt and tls.key and checks they form a usable pair; throws naming the directory. */
export async function readKeyPair(dir: string): Promise<KeyPair> {
  let pair: KeyPair;
  try {
    const [cert, key] = await Promise.all([
      readFile(join(dir, CERT_FILE), 'utf8'),
      readFile(join(dir, KEY_FILE), 'utf8'),
    ]);
    pair = { cert, key };
  } catch (e) {
    throw new Error(`webhook: cannot read ${CERT_FILE} and ${KEY_FILE} in ${dir}: ${(e as Error).message}`);
  }
  try {
    createSecureContext(pair);
  } catch (e) {
    throw new Error(`webhook: ${CERT_FILE} and ${KEY_FILE} in ${dir} are not a usable pair: ${(e as Error).message}`);
  }
  return pair;
}

const fingerprint = (p: KeyPair) => createHash('sha256').update(p.cert).update('\0').update(p.key).digest('hex');

/**
 * Polls the directory and calls `onChange` with each new, valid pair. A
 * half-rotated pair (new certificate, old key) is skipped until both files
 * agree; the last good pair keeps being served meanwhile.
 */
export function watchKeyPair(
  dir: string,
  initial: KeyPair,
  onChange: (pair: KeyPair) => void,
  opts: { log: Logger; pollMs?: number },
): { stop(): void } {
  let current = fingerprint(initial);
  let lastError: string | undefined;
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    readKeyPair(dir)
      .then((pair) => {
        lastError = undefined;
        const next = fingerprint(pair);
        if (next === current) return;
        current = next;
        onChange(pair);
        opts.log.info({ dir }, 'webhook serving certificate reloaded');
      })
      .catch((e: unknown) => {
        const text = (e as Error).message;
        if (text !== lastError)
          opts.log.warn({ dir, err: text }, 'webhook certificate not reloaded; serving the previous one');
        lastError = text;
      })
      .finally(() => {
        busy = false;
      });
  }, opts.pollMs ?? DEFAULT_CERT_POLL_MS);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
