// A TLS server's certificate and key from PEM files, re-read periodically so a
// rotated pair (cert-manager renewals; the kubelet swaps Secret volumes
// atomically) is served without a restart. Shared by the admission webhook
// (src/webhook/tls.ts) and the Masakari API listener (src/api/tls.ts).
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createSecureContext } from 'node:tls';
import type { Logger } from 'pino';

export interface KeyPair {
  cert: string;
  key: string;
}

/** Where a pair is read from, and how errors and logs name it. */
export interface KeyPairSource {
  certFile: string;
  keyFile: string;
  /** Who serves it, first word of every message ("webhook", "api"). */
  owner: string;
  /** The files in a message, e.g. "tls.crt and tls.key in /certs". */
  describe: string;
}

/** Kubelet refreshes mounted Secrets within about a minute; polling every 10 s adds little to that. */
export const DEFAULT_CERT_POLL_MS = 10_000;

/** Reads both files and checks they form a usable pair; throws naming them. */
export async function readKeyPairFiles(src: KeyPairSource): Promise<KeyPair> {
  let pair: KeyPair;
  try {
    const [cert, key] = await Promise.all([readFile(src.certFile, 'utf8'), readFile(src.keyFile, 'utf8')]);
    pair = { cert, key };
  } catch (e) {
    throw new Error(`${src.owner}: cannot read ${src.describe}: ${(e as Error).message}`);
  }
  try {
    createSecureContext(pair);
  } catch (e) {
    throw new Error(`${src.owner}: ${src.describe} are not a usable pair: ${(e as Error).message}`);
  }
  return pair;
}

const fingerprint = (p: KeyPair) => createHash('sha256').update(p.cert).update('\0').update(p.key).digest('hex');

/**
 * Polls the files and calls `onChange` with each new, valid pair. A
 * half-rotated pair (new certificate, old key) or an unreadable file is
 * skipped, logged once, until both files agree; the last good pair keeps
 * being served meanwhile.
 */
export function watchKeyPairFiles(
  src: KeyPairSource,
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
    readKeyPairFiles(src)
      .then((pair) => {
        lastError = undefined;
        const next = fingerprint(pair);
        if (next === current) return;
        onChange(pair);
        current = next;
        opts.log.info({ certFile: src.certFile, keyFile: src.keyFile }, `${src.owner} serving certificate reloaded`);
      })
      .catch((e: unknown) => {
        const text = (e as Error).message;
        if (text !== lastError)
          opts.log.warn(
            { certFile: src.certFile, keyFile: src.keyFile, err: text },
            `${src.owner} certificate not reloaded; serving the previous one`,
          );
        lastError = text;
      })
      .finally(() => {
        busy = false;
      });
  }, opts.pollMs ?? DEFAULT_CERT_POLL_MS);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
