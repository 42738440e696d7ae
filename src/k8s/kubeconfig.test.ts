import { test } from 'uvu';
import * as assert from 'uvu/assert';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type https from 'node:https';
import { loadKubeConfig } from './kubeconfig.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kubeconfig-test-'));
const write = (name: string, server: string, context = 'ctx'): string => {
  const p = path.join(dir, name);
  fs.writeFileSync(
    p,
    [
      'apiVersion: v1',
      'kind: Config',
      `clusters: [{name: c-${name}, cluster: {server: "${server}"}}]`,
      `users: [{name: u-${name}, user: {token: t}}]`,
      `contexts: [{name: ${context}, context: {cluster: c-${name}, user: u-${name}}}]`,
      `current-context: ${context}`,
    ].join('\n'),
  );
  return p;
};
const a = write('a', 'https://a.example:6443', 'ctx-a');
const b = write('b', 'https://b.example:6443', 'ctx-b');
const home = path.join(dir, 'home');
fs.mkdirSync(path.join(home, '.kube'), { recursive: true });
fs.copyFileSync(write('h', 'https://home.example:6443'), path.join(home, '.kube', 'config'));
const root = path.join(dir, 'pod');
const sa = path.join(root, 'var/run/secrets/kubernetes.io/serviceaccount');
fs.mkdirSync(sa, { recursive: true });
fs.writeFileSync(path.join(sa, 'token'), 'pod-token');
fs.writeFileSync(path.join(sa, 'namespace'), 'masakari');

const server = (kc: ReturnType<typeof loadKubeConfig>) => kc.getCurrentCluster()?.server;

test('an explicit path wins over everything', () => {
  assert.is(server(loadKubeConfig({ path: b, env: { KUBECONFIG: a, HOME: home } })), 'https://b.example:6443');
});

test('KUBECONFIG is a path list; the first file sets the context and later files merge in', () => {
  const kc = loadKubeConfig({
    env: { KUBECONFIG: [a, path.join(dir, 'missing'), b].join(path.delimiter), HOME: home },
  });
  assert.is(server(kc), 'https://a.example:6443');
  assert.ok(kc.getContextObject('ctx-b'), 'the second file was merged');
  kc.setCurrentContext('ctx-b');
  assert.is(server(kc), 'https://b.example:6443');
});

test('a pod uses its service account before any ~/.kube/config', () => {
  const saved = { host: process.env.KUBERNETES_SERVICE_HOST, port: process.env.KUBERNETES_SERVICE_PORT };
  process.env.KUBERNETES_SERVICE_HOST = '10.0.0.1';
  process.env.KUBERNETES_SERVICE_PORT = '443';
  try {
    const kc = loadKubeConfig({ env: { ...process.env, KUBECONFIG: '', HOME: home }, inClusterRoot: root });
    assert.is(server(kc), 'https://10.0.0.1:443');
    assert.is(kc.getCurrentUser()?.tokenFile, path.join(sa, 'token'), 'token file re-read on rotation');
  } finally {
    if (saved.host === undefined) delete process.env.KUBERNETES_SERVICE_HOST;
    else process.env.KUBERNETES_SERVICE_HOST = saved.host;
    if (saved.port === undefined) delete process.env.KUBERNETES_SERVICE_PORT;
    else process.env.KUBERNETES_SERVICE_PORT = saved.port;
  }
});

test('~/.kube/config is the last resort', () => {
  assert.is(server(loadKubeConfig({ env: { HOME: home }, inClusterRoot: root })), 'https://home.example:6443');
});

test('no credentials anywhere is a clear error', () => {
  assert.throws(
    () => loadKubeConfig({ env: { HOME: path.join(dir, 'nowhere') }, inClusterRoot: root }),
    /no Kubernetes credentials/,
  );
});

test('a context override must name a known context', () => {
  assert.is(
    server(loadKubeConfig({ env: { KUBECONFIG: [a, b].join(path.delimiter) }, context: 'ctx-b' })),
    'https://b.example:6443',
  );
  assert.throws(() => loadKubeConfig({ path: a, context: 'nope' }));
});

const writeRaw = (name: string, lines: string[]): string => {
  const p = path.join(dir, name);
  fs.writeFileSync(p, lines.join('\n'));
  return p;
};

test('TLS material and a bearer token become https options; relative paths are relative to the file', async () => {
  fs.writeFileSync(path.join(dir, 'client.crt'), 'CERT');
  fs.writeFileSync(path.join(dir, 'client.key'), 'KEY');
  const p = writeRaw('tls', [
    'apiVersion: v1',
    'kind: Config',
    `clusters: [{name: c, cluster: {server: "https://x:6443", certificate-authority-data: ${Buffer.from('CA').toString('base64')}, tls-server-name: api.internal}}]`,
    'users: [{name: u, user: {token: tok, client-certificate: client.crt, client-key: client.key}}]',
    'contexts: [{name: x, context: {cluster: c, user: u}}]',
    'current-context: x',
  ]);
  const opts: https.RequestOptions & { headers?: Record<string, string> } = {};
  await loadKubeConfig({ path: p }).applyToHTTPSOptions(opts);
  assert.is(String(opts.ca), 'CA');
  assert.is(String(opts.cert), 'CERT');
  assert.is(String(opts.key), 'KEY');
  assert.is(opts.servername, 'api.internal');
  assert.is(opts.headers?.Authorization, 'Bearer tok');
});

test('a token file is re-read each time credentials are resolved (rotation); insecure-skip-tls-verify', async () => {
  const tokenFile = path.join(dir, 'rotating-token');
  fs.writeFileSync(tokenFile, 'one\n');
  const p = writeRaw('tokenfile', [
    'apiVersion: v1',
    'kind: Config',
    'clusters: [{name: c, cluster: {server: "https://x:6443", insecure-skip-tls-verify: true}}]',
    `users: [{name: u, user: {tokenFile: ${tokenFile}}}]`,
    'contexts: [{name: x, context: {cluster: c, user: u}}]',
    'current-context: x',
  ]);
  const kc = loadKubeConfig({ path: p });
  const first: { headers?: Record<string, string>; rejectUnauthorized?: boolean } = {};
  await kc.applyToHTTPSOptions(first);
  fs.writeFileSync(tokenFile, 'two\n');
  const second: { headers?: Record<string, string> } = {};
  await kc.applyToHTTPSOptions(second);
  assert.equal([first.headers?.Authorization, second.headers?.Authorization], ['Bearer one', 'Bearer two']);
  assert.is(first.rejectUnauthorized, false);
});

test('an exec plugin is resolved through @kubernetes/client-node, loaded only then', async () => {
  const cred = JSON.stringify({
    apiVersion: 'client.authentication.k8s.io/v1',
    kind: 'ExecCredential',
    status: { token: 'from-exec' },
  });
  const p = writeRaw('exec', [
    'apiVersion: v1',
    'kind: Config',
    'clusters: [{name: c, cluster: {server: "https://x:6443"}}]',
    'users:',
    '- name: u',
    '  user:',
    '    exec:',
    '      apiVersion: client.authentication.k8s.io/v1',
    '      command: sh',
    `      args: ["-c", ${JSON.stringify(`echo '${cred}'`)}]`,
    '      interactiveMode: Never',
    'contexts: [{name: x, context: {cluster: c, user: u}}]',
    'current-context: x',
  ]);
  const opts: { headers?: Record<string, string> } = { headers: {} };
  await loadKubeConfig({ path: p }).applyToHTTPSOptions(opts);
  assert.is(opts.headers?.Authorization, 'Bearer from-exec');
});

test.after(() => fs.rmSync(dir, { recursive: true, force: true }));

test.run();
