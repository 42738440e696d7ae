// Acceptance: the real openstack CLI reaches the facade over TLS, and through
// a TLS-terminating reverse proxy (Debian's haproxy) under a path prefix, and
// the version documents it discovers the API from link back over https with
// the proxy's address and prefix ([DEFAULT] use_ssl and [wsgi] ssl_*;
// [oslo_middleware] enable_proxy_headers_parsing and
// [DEFAULT] osapi_masakari_link_prefix). .ci/run installs haproxy.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import https from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startStack, type Stack } from './support/stack.ts';
import { e2eVenv } from './support/python-env.ts';
import { freePort } from './support/net.ts';
import { selfSignedKeyPair } from '../../src/webhook/self-signed.ts';

const run = promisify(execFile);

/** `openstack <args> -f json` with the simulator's credentials and OS_CACERT. */
async function openstack(stack: Stack, caFile: string, args: string[]): Promise<unknown> {
  const venv = await e2eVenv();
  const env = { PATH: process.env.PATH, HOME: process.env.HOME, ...stack.sim.credentials, OS_CACERT: caFile };
  try {
    const r = await run(path.join(venv, 'bin/openstack'), [...args, '-f', 'json'], { env, timeout: 60_000 });
    return JSON.parse(r.stdout);
  } catch (e) {
    const err = e as { stderr?: string; stdout?: string; message: string };
    throw new Error(`openstack ${args.join(' ')} failed: ${err.stderr || err.stdout || err.message}`);
  }
}

/** A Keystone token of the simulator's admin, for the authenticated /v1 document. */
async function issueToken(stack: Stack): Promise<string> {
  const venv = await e2eVenv();
  const env = { PATH: process.env.PATH, HOME: process.env.HOME, ...stack.sim.credentials };
  const r = await run(path.join(venv, 'bin/openstack'), ['token', 'issue', '-f', 'value', '-c', 'id'], {
    env,
    timeout: 60_000,
  });
  return r.stdout.trim();
}

/** GET over https trusting only `ca`; the parsed JSON body. */
function getJson(
  url: string,
  ca: string,
  token?: string,
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    https
      .get(url, { ca, agent: false, headers: token ? { 'x-auth-token': token } : {} }, (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
      })
      .on('error', reject);
  });
}

/** The self links of GET <base>/ (no token, as in Masakari) and GET <base>/v1 (behind Keystone auth). */
async function versionLinks(stack: Stack, base: string, ca: string): Promise<{ root: string; v1: string }> {
  const root = await getJson(`${base}/`, ca);
  assert.is(root.status, 200, JSON.stringify(root.body));
  const v1 = await getJson(`${base}/v1`, ca, await issueToken(stack));
  assert.is(v1.status, 200, JSON.stringify(v1.body));
  return { root: root.body.versions[0].links[0].href, v1: v1.body.version.links[0].href };
}

async function segmentRoundTrip(stack: Stack, caFile: string, name: string): Promise<void> {
  const created = (await openstack(stack, caFile, ['segment', 'create', name, 'auto', 'COMPUTE'])) as {
    name: string;
  };
  assert.is(created.name, name);
  const listed = (await openstack(stack, caFile, ['segment', 'list'])) as Array<{ name: string }>;
  assert.ok(
    listed.some((s) => s.name === name),
    JSON.stringify(listed),
  );
}

test('over TLS with a CA file, openstack segment list works and version links read https', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'e2e-api-tls-'));
  let stack: Stack | undefined;
  try {
    const pair = await selfSignedKeyPair();
    await writeFile(path.join(dir, 'api.crt'), pair.cert);
    await writeFile(path.join(dir, 'api.key'), pair.key);
    await writeFile(path.join(dir, 'ca.crt'), pair.caPem);
    stack = await startStack({
      prefix: 'tls',
      components: 'api',
      auth: 'keystone',
      masakariUrl: (port) => `https://localhost:${port}/v1`,
      env: {
        MASAKARI__DEFAULT__USE_SSL: 'true',
        MASAKARI__WSGI__SSL_CERT_FILE: path.join(dir, 'api.crt'),
        MASAKARI__WSGI__SSL_KEY_FILE: path.join(dir, 'api.key'),
      },
    });
    const base = `https://localhost:${new URL(stack.operator.apiUrl).port}`;
    assert.equal(await versionLinks(stack, base, pair.caPem), { root: `${base}/v1/`, v1: `${base}/v1/` });
    await segmentRoundTrip(stack, path.join(dir, 'ca.crt'), 'tls-seg-1');
  } finally {
    await stack?.stop();
    await rm(dir, { recursive: true, force: true });
  }
});

test('behind a TLS-terminating haproxy with a path prefix, links read https://<proxy>/<prefix>/ and the CLI works', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'e2e-api-proxy-'));
  const proxyPort = await freePort();
  const proxy = `https://localhost:${proxyPort}`;
  let stack: Stack | undefined;
  let haproxy: ReturnType<typeof spawn> | undefined;
  try {
    const pair = await selfSignedKeyPair();
    await writeFile(path.join(dir, 'proxy.pem'), `${pair.cert.trim()}\n${pair.key.trim()}\n`);
    await writeFile(path.join(dir, 'ca.crt'), pair.caPem);
    stack = await startStack({
      prefix: 'proxy',
      components: 'api',
      auth: 'keystone',
      masakariUrl: () => `${proxy}/instance-ha/v1`,
      env: {
        MASAKARI__OSLO_MIDDLEWARE__ENABLE_PROXY_HEADERS_PARSING: 'true',
        MASAKARI__DEFAULT__OSAPI_MASAKARI_LINK_PREFIX: proxy,
      },
    });
    // TLS ends at the proxy, which strips its prefix and says so in X-Forwarded-*.
    const config = [
      'global',
      '  maxconn 256',
      'defaults',
      '  mode http',
      '  timeout connect 5s',
      '  timeout client 60s',
      '  timeout server 60s',
      'frontend public',
      `  bind 127.0.0.1:${proxyPort} ssl crt ${path.join(dir, 'proxy.pem')}`,
      '  http-request set-header X-Forwarded-Proto https',
      '  http-request set-header X-Forwarded-Host %[req.hdr(host)]',
      '  http-request set-header X-Forwarded-Prefix /instance-ha',
      '  http-request deny deny_status 404 unless { path_beg /instance-ha }',
      '  http-request replace-path ^/instance-ha/?(.*)$ /\\1',
      '  default_backend masakari',
      'backend masakari',
      `  server api 127.0.0.1:${new URL(stack.operator.apiUrl).port}`,
      '',
    ].join('\n');
    await writeFile(path.join(dir, 'haproxy.cfg'), config);
    const check = await run('haproxy', ['-c', '-f', path.join(dir, 'haproxy.cfg')]).catch(
      (e: { stderr?: string; message: string }) => {
        throw new Error(`haproxy -c: ${e.stderr || e.message}`);
      },
    );
    assert.ok(check);
    haproxy = spawn('haproxy', ['-db', '-f', path.join(dir, 'haproxy.cfg')], { stdio: 'ignore' });
    const deadline = Date.now() + 10_000;
    for (;;) {
      const up = await getJson(`${proxy}/instance-ha/`, pair.caPem).then(
        (r) => r.status === 200,
        () => false,
      );
      if (up) break;
      if (Date.now() > deadline) throw new Error('haproxy did not come up');
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(await versionLinks(stack, `${proxy}/instance-ha`, pair.caPem), {
      root: `${proxy}/instance-ha/v1/`,
      v1: `${proxy}/instance-ha/v1/`,
    });
    await segmentRoundTrip(stack, path.join(dir, 'ca.crt'), 'proxy-seg-1');
  } finally {
    if (haproxy && haproxy.exitCode === null) {
      haproxy.kill('SIGTERM');
      await once(haproxy, 'exit');
    }
    await stack?.stop();
    await rm(dir, { recursive: true, force: true });
  }
});

test.run();
