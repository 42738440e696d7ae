// The Masakari API over TLS: masakari/wsgi.py Server with [DEFAULT] use_ssl
// and [wsgi] ssl_cert_file, ssl_key_file, ssl_ca_file. As there, use_ssl
// without both a certificate and a key stops the start, and a CA file makes a
// client certificate signed by it a requirement. Unlike there, the pair is
// re-read when the files change (net/key-pair.ts), so a cert-manager renewal
// needs no restart; a bad new pair keeps the old one and is logged.
import { X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import type { RequestListener } from 'node:http';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { gauge } from '../runtime/metric-registry.ts';
import { readKeyPairFiles, watchKeyPairFiles, type KeyPair, type KeyPairSource } from '../net/key-pair.ts';

export interface ApiTlsSettings {
  certFile: string;
  keyFile: string;
  /** Client certificates must chain to this CA bundle; null: none asked for. */
  caFile: string | null;
  /** How often the files are checked for a new pair (tests shorten it). */
  pollMs?: number;
}

export interface ApiTlsConfig {
  DEFAULT: { use_ssl: boolean };
  wsgi: { ssl_cert_file: string | null; ssl_key_file: string | null; ssl_ca_file: string | null };
}

/** The listener's TLS settings; undefined with use_ssl off. Throws as masakari/wsgi.py does when a file is missing. */
export function apiTlsSettings(config: ApiTlsConfig): ApiTlsSettings | undefined {
  if (!config.DEFAULT.use_ssl) return undefined;
  const { ssl_cert_file: certFile, ssl_key_file: keyFile, ssl_ca_file: caFile } = config.wsgi;
  if (!certFile || !keyFile) {
    throw new Error(
      'When running server in SSL mode, you must specify both [wsgi] ssl_cert_file and ssl_key_file ' +
        '([DEFAULT] use_ssl is true)',
    );
  }
  return { certFile, keyFile, caFile };
}

export interface ApiListener {
  server: http.Server;
  /** Stops the certificate watch (the server is closed by its owner). */
  stopWatch(): void;
}

/** notAfter of the first certificate of a PEM chain, in seconds since the epoch. */
export function certificateExpiry(pem: string): number {
  return Math.floor(new Date(new X509Certificate(pem).validTo).getTime() / 1000);
}

/**
 * An HTTP server, or an HTTPS one serving the files' pair and following their
 * changes. The served certificate's notAfter is the gauge
 * masakari_api_certificate_expiry_timestamp_seconds, so a renewal that never
 * arrives (or a renewed pair that does not load) alerts before clients fail.
 */
export async function createApiListener(
  app: RequestListener,
  tls: ApiTlsSettings | undefined,
  log: Logger,
  metrics?: Registry,
): Promise<ApiListener> {
  if (!tls) return { server: http.createServer(app), stopWatch: () => {} };
  const source: KeyPairSource = {
    certFile: tls.certFile,
    keyFile: tls.keyFile,
    owner: 'api',
    describe: `[wsgi] ssl_cert_file ${tls.certFile} and ssl_key_file ${tls.keyFile}`,
  };
  const pair = await readKeyPairFiles(source);
  let ca: string | undefined;
  if (tls.caFile) {
    try {
      ca = await readFile(tls.caFile, 'utf8');
    } catch (e) {
      throw new Error(`api: cannot read [wsgi] ssl_ca_file ${tls.caFile}: ${(e as Error).message}`);
    }
  }
  const contextOf = (p: KeyPair) => ({
    ...p,
    minVersion: 'TLSv1.2' as const,
    ...(ca ? { ca, requestCert: true, rejectUnauthorized: true } : {}),
  });
  const expiry = gauge(
    metrics,
    'masakari_api_certificate_expiry_timestamp_seconds',
    "notAfter (Unix seconds) of the certificate the API's TLS listener serves.",
  );
  expiry.set(certificateExpiry(pair.cert));
  const server = https.createServer(contextOf(pair), app);
  const watch = watchKeyPairFiles(
    source,
    pair,
    (next) => {
      server.setSecureContext(contextOf(next));
      expiry.set(certificateExpiry(next.cert));
    },
    { log, ...(tls.pollMs ? { pollMs: tls.pollMs } : {}) },
  );
  return { server, stopWatch: () => watch.stop() };
}
