// Version links behind a proxy: oslo.middleware's HTTPProxyToWSGI with
// [oslo_middleware] enable_proxy_headers_parsing, and
// [DEFAULT] osapi_masakari_link_prefix as masakari/api/openstack/common.py
// applies it (ViewBuilder._update_link_prefix).

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startHarness } from './testing/harness.ts';
import type { Harness } from './testing/harness.ts';
import { hostUrl, parseForwarded, proxiedOrigin, withLinkPrefix } from './wsgi-request.ts';

async function withHarness(o: Parameters<typeof startHarness>[0], fn: (h: Harness) => Promise<void>): Promise<void> {
  const h = await startHarness(o);
  try {
    await fn(h);
  } finally {
    await h.close();
  }
}

/** The three documents that carry links: GET /, GET /v1 and a 300 choice. */
async function links(h: Harness, headers: Record<string, string> = {}) {
  const root = await h.request('GET', '/', { headers });
  const v1 = await h.request('GET', '/v1', { headers });
  const choices = await h.request('GET', '/v2/x', { headers });
  return {
    root: root.json.versions[0].links[0].href as string,
    v1: v1.json.version.links[0].href as string,
    choice: choices.json.choices[0].links[0].href as string,
  };
}

const PROXY = {
  'X-Forwarded-Proto': 'https',
  'X-Forwarded-Host': 'cloud.example.com',
  'X-Forwarded-Prefix': '/instance-ha',
};

test('without enable_proxy_headers_parsing, X-Forwarded-* headers do not change links', async () => {
  await withHarness({}, async (h) => {
    assert.equal(await links(h, PROXY), { root: `${h.url}/v1/`, v1: `${h.url}/v1/`, choice: `${h.url}/v1/v2/x` });
  });
});

test('with enable_proxy_headers_parsing, X-Forwarded-Proto, -Host and -Prefix make the links', async () => {
  await withHarness({ proxyHeaders: true }, async (h) => {
    assert.equal(await links(h, PROXY), {
      root: 'https://cloud.example.com/instance-ha/v1/',
      v1: 'https://cloud.example.com/instance-ha/v1/',
      choice: 'https://cloud.example.com/instance-ha/v1/v2/x',
    });
  });
});

test('with enable_proxy_headers_parsing, Forwarded wins over X-Forwarded-Proto and -Host, its first proxy counts', async () => {
  await withHarness({ proxyHeaders: true }, async (h) => {
    const r = await links(h, {
      Forwarded: 'for=192.0.2.60;proto=https;host=edge.example.com:8443, for=10.0.0.1;proto=http;host=inner',
      'X-Forwarded-Proto': 'http',
      'X-Forwarded-Host': 'ignored.example.com',
    });
    assert.is(r.root, 'https://edge.example.com:8443/v1/');
  });
});

test('with enable_proxy_headers_parsing and no proxy headers, links name the request host', async () => {
  await withHarness({ proxyHeaders: true }, async (h) => {
    assert.is((await links(h)).root, `${h.url}/v1/`);
  });
});

test('osapi_masakari_link_prefix replaces scheme and host and goes before the path', async () => {
  await withHarness({ linkPrefix: 'https://cloud.example.com/ha' }, async (h) => {
    assert.equal(await links(h), {
      root: 'https://cloud.example.com/ha/v1/',
      v1: 'https://cloud.example.com/ha/v1/',
      choice: 'https://cloud.example.com/ha/v1/v2/x',
    });
  });
});

test('osapi_masakari_link_prefix applies after the proxy headers, keeping X-Forwarded-Prefix', async () => {
  await withHarness({ proxyHeaders: true, linkPrefix: 'https://public.example.com/' }, async (h) => {
    assert.is((await links(h, PROXY)).v1, 'https://public.example.com//instance-ha/v1/');
  });
});

test('parseForwarded splits proxies and pairs, lower-casing keys as oslo.middleware does', () => {
  assert.equal(parseForwarded('For=192.0.2.60;Proto=https, for=192.0.2.61;by=203.0.113.43'), [
    { for: '192.0.2.60', proto: 'https' },
    { for: '192.0.2.61', by: '203.0.113.43' },
  ]);
});

test('proxiedOrigin: empty headers change nothing, X-Forwarded-Prefix counts also with Forwarded', () => {
  assert.equal(proxiedOrigin({ host: 'api:15868', 'x-forwarded-proto': '' }, 'http', true), {
    scheme: 'http',
    host: 'api:15868',
    scriptPrefix: '',
  });
  assert.equal(proxiedOrigin({ host: 'api', forwarded: 'proto=https', 'x-forwarded-prefix': '/p' }, 'http', true), {
    scheme: 'https',
    host: 'api',
    scriptPrefix: '/p',
  });
});

test("hostUrl drops the scheme's default port, as webob's host_url does", () => {
  assert.is(hostUrl('https', 'proxy:443'), 'https://proxy');
  assert.is(hostUrl('http', 'proxy:80'), 'http://proxy');
  assert.is(hostUrl('https', 'proxy:80'), 'https://proxy:80');
  assert.is(hostUrl('http', '[::1]'), 'http://[::1]');
  assert.is(hostUrl('http', '[::1]:80'), 'http://[::1]');
});

test('withLinkPrefix keeps the query and drops trailing slashes', () => {
  assert.is(withLinkPrefix('http://10.0.0.5:15868/v1', null), 'http://10.0.0.5:15868/v1');
  assert.is(withLinkPrefix('http://10.0.0.5:15868/v1/', 'https://a.example'), 'https://a.example/v1');
  assert.is(withLinkPrefix('http://10.0.0.5:15868', 'https://a.example/p'), 'https://a.example/p');
  assert.is(withLinkPrefix('http://h/v1?limit=1', 'https://a.example/p'), 'https://a.example/p/v1?limit=1');
});

test.run();
