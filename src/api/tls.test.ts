// The API over TLS ([DEFAULT] use_ssl, [wsgi] ssl_cert_file/ssl_key_file/
// ssl_ca_file): links read https, a renewed pair is served without a restart,
// a bad new pair keeps the old one.

import https from 'node:https';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createComponent } from './component.ts';
import { apiTlsSettings, certificateExpiry } from './tls.ts';
import { componentContext as context } from './testing/component-context.ts';
import { memoryStore } from './testing/harness.ts';
import { loadConfig } from '../config/load.ts';
import { selfSignedKeyPair } from '../webhook/self-signed.ts';
import { startComponent } from '../testing/component.ts';

function getTls(port: number, path: string, ca: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    https
      .get({ host: '127.0.0.1', port, path, ca, servername: 'localhost', agent: false }, (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .on('error', reject);
  });
}

async function tempDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'api-tls-'));
  try {
    await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

test('use_ssl without both ssl_cert_file and ssl_key_file is refused at start, as masakari/wsgi.py does', () => {
  const config = loadConfig({ env: {} }).config;
  assert.is(apiTlsSettings(config), undefined, 'use_ssl off: plain HTTP');
  config.DEFAULT.use_ssl = true;
  config.wsgi.ssl_cert_file = '/etc/masakari/api.crt';
  assert.throws(() => apiTlsSettings(config), /you must specify both \[wsgi\] ssl_cert_file and ssl_key_file/);
});

test('over TLS the facade answers and its version links read https', async () => {
  await tempDir(async (dir) => {
    const pair = await selfSignedKeyPair();
    await writeFile(join(dir, 'api.crt'), pair.cert);
    await writeFile(join(dir, 'api.key'), pair.key);
    const ctx = context();
    ctx.config.DEFAULT.use_ssl = true;
    ctx.config.wsgi.ssl_cert_file = join(dir, 'api.crt');
    ctx.config.wsgi.ssl_key_file = join(dir, 'api.key');
    const c = await startComponent(ctx, (app) =>
      createComponent(app, { repository: memoryStore(), listen: { host: '127.0.0.1', port: 0 } }),
    );
    try {
      const port = c.address().port;
      assert.is((await getTls(port, '/v1/segments', pair.caPem)).body, '{"segments": []}');
      const root = JSON.parse((await getTls(port, '/', pair.caPem)).body);
      assert.is(root.versions[0].links[0].href, `https://127.0.0.1:${port}/v1/`);
    } finally {
      await c.stop();
    }
  });
});

test('a renewed certificate is served without a restart; a bad new pair keeps the old one', async () => {
  await tempDir(async (dir) => {
    const first = await selfSignedKeyPair();
    const second = await selfSignedKeyPair();
    const certFile = join(dir, 'api.crt');
    const keyFile = join(dir, 'api.key');
    await writeFile(certFile, first.cert);
    await writeFile(keyFile, first.key);
    const ctx = context();
    const c = await startComponent(ctx, (app) =>
      createComponent(app, {
        repository: memoryStore(),
        listen: { host: '127.0.0.1', port: 0 },
        tls: { certFile, keyFile, caFile: null, pollMs: 30 },
      }),
    );
    const expiry = async () =>
      (await ctx.metrics.getSingleMetric('masakari_api_certificate_expiry_timestamp_seconds')!.get()).values[0]?.value;
    try {
      const port = c.address().port;
      assert.is((await getTls(port, '/v1/segments', first.caPem)).status, 200);
      assert.is(await expiry(), certificateExpiry(first.cert));
      // A key that does not match the certificate: the old pair stays.
      await writeFile(keyFile, second.key);
      await new Promise((r) => setTimeout(r, 150));
      assert.is((await getTls(port, '/v1/segments', first.caPem)).status, 200);
      await writeFile(certFile, second.cert);
      const deadline = Date.now() + 5_000;
      let renewed = false;
      while (!renewed && Date.now() < deadline) {
        renewed = await getTls(port, '/v1/segments', second.caPem).then(
          (r) => r.status === 200,
          () => false,
        );
        if (!renewed) await new Promise((r) => setTimeout(r, 30));
      }
      assert.ok(renewed, 'the renewed certificate is served');
      assert.is(await expiry(), certificateExpiry(second.cert));
      await getTls(port, '/v1/segments', first.caPem).then(
        () => assert.unreachable('the old CA must no longer verify'),
        (e: Error) => assert.match(e.message, /certificate|self.signed|verify/i),
      );
    } finally {
      await c.stop();
    }
  });
});

test('with ssl_ca_file a client without a certificate is refused', async () => {
  await tempDir(async (dir) => {
    const pair = await selfSignedKeyPair();
    const certFile = join(dir, 'api.crt');
    const keyFile = join(dir, 'api.key');
    const caFile = join(dir, 'clients-ca.crt');
    await writeFile(certFile, pair.cert);
    await writeFile(keyFile, pair.key);
    await writeFile(caFile, pair.caPem);
    const c = await startComponent(context(), (app) =>
      createComponent(app, {
        repository: memoryStore(),
        listen: { host: '127.0.0.1', port: 0 },
        tls: { certFile, keyFile, caFile },
      }),
    );
    try {
      await getTls(c.address().port, '/v1/segments', pair.caPem).then(
        (r) => assert.unreachable(`answered ${r.status}`),
        (e: Error) => assert.ok(e instanceof Error),
      );
    } finally {
      await c.stop();
    }
  });
});

test.run();
