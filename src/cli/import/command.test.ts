import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runImportCommand } from './command.ts';

async function run(argv: string[], env: NodeJS.ProcessEnv = {}) {
  let stdout = '';
  let stderr = '';
  const code = await runImportCommand(argv, {
    env,
    stdout: (t) => void (stdout += t),
    stderr: (t) => void (stderr += t),
  });
  return { code, stdout, stderr };
}

/** Runs `fn` with a server that answers every request (Masakari's or Keystone's) 401, as a Masakari without credentials does. */
async function withUnauthorizedServer(fn: (port: number) => Promise<void>): Promise<void> {
  const server = createServer((_req, res) => {
    res.statusCode = 401;
    res.setHeader('content-type', 'application/json');
    res.end('{"error": {"message": "The request you have made requires authentication."}}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  try {
    await fn(port);
  } finally {
    await new Promise((r) => server.close(r));
  }
}

test('--help prints the usage and exits 0', async () => {
  const r = await run(['--help']);
  assert.is(r.code, 0);
  assert.match(r.stdout, /^usage: masakari-operator import --from <masakari URL>/);
});

test('usage mistakes exit 2 with the message and the usage', async () => {
  for (const argv of [[], ['--from', 'not a url'], ['--from', 'http://m', '--namespace', 'Not_A_Label']]) {
    const r = await run(argv);
    assert.is(r.code, 2, argv.join(' '));
    assert.match(r.stderr, /^masakari-operator import: /);
  }
});

test('--verify-hosts without OpenStack credentials is a usage error', async () => {
  const r = await run(['--from', 'http://127.0.0.1:9', '--verify-hosts']);
  assert.is(r.code, 2);
  assert.match(r.stderr, /--verify-hosts needs OpenStack credentials/);
});

test('a Masakari that cannot be read exits 1 before touching the cluster', async () => {
  await withUnauthorizedServer(async (port) => {
    // KUBECONFIG points nowhere: the run must stop at the source, not at the cluster.
    const r = await run(['--from', `http://127.0.0.1:${port}`], { KUBECONFIG: '/nonexistent/kubeconfig' });
    assert.is(r.code, 1);
    assert.match(r.stderr, /reading segments and hosts from http:\/\/127\.0\.0\.1:\d+\/v1 \(without authentication\)/);
    assert.match(r.stderr, /segments: HTTP 401: The request you have made requires authentication\..*--os-token/);
  });
});

test('--config-file: the credentials of a masakari.conf log in to Keystone, as run reads them', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'import-conf-'));
  try {
    await withUnauthorizedServer(async (port) => {
      const conf = join(dir, 'masakari.conf');
      writeFileSync(
        conf,
        `[keystone_authtoken]\nauth_url = http://127.0.0.1:${port}/identity\nusername = masakari\npassword = secret\nproject_name = service\n`,
      );
      for (const argv of [['--config-file', conf], [`--config-file=${conf}`]]) {
        const r = await run(['--from', `http://127.0.0.1:${port}`, '--timeout', '2', ...argv], {
          KUBECONFIG: '/nonexistent/kubeconfig',
        });
        assert.is(r.code, 1, r.stderr);
        assert.match(r.stderr, new RegExp(`with a Keystone token for http://127\\.0\\.0\\.1:${port}/identity`));
      }
    });
    const missing = await run(['--from', 'http://127.0.0.1:9', '--config-file']);
    assert.is(missing.code, 2);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
