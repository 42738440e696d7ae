import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';

const cli = fileURLToPath(new URL('./cli.ts', import.meta.url));

test('the CLI prints OS_* exports, serves the given hosts and servers, and stops on SIGTERM', async () => {
  const child = spawn(process.execPath, ['--import', 'tsx', cli, '--hosts', 'cpu1,cpu2', '--server', 'vm1@cpu1:ha'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  try {
    let out = '';
    child.stdout.setEncoding('utf8');
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no banner in time: ${out}`)), 20_000);
      child.stdout.on('data', (chunk: string) => {
        out += chunk;
        if (out.includes('# Nova:')) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('exit', (code) => reject(new Error(`exited early with ${code}: ${out}`)));
    });
    const authUrl = /export OS_AUTH_URL='([^']+)'/.exec(out)?.[1];
    assert.ok(authUrl);
    assert.match(out, /export OS_PASSWORD='admin-secret'/);
    const base = (authUrl as string).replace(/\/identity\/v3$/, '');
    const res = await request(`${base}/_sim/state`);
    const state = (await res.body.json()) as {
      hosts: { host: string }[];
      servers: { name: string; metadata: object }[];
    };
    assert.equal(
      state.hosts.map((h) => h.host),
      ['cpu1', 'cpu2'],
    );
    assert.equal(state.servers[0]?.metadata, { HA_Enabled: 'True' });
  } finally {
    child.kill('SIGTERM');
    const [code] = (await once(child, 'exit')) as [number | null];
    assert.is(code, 0);
  }
});

test('the CLI rejects a malformed --server with exit code 2', async () => {
  const child = spawn(process.execPath, ['--import', 'tsx', cli, '--server', 'nohost'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
  const [code] = (await once(child, 'exit')) as [number | null];
  assert.is(code, 2);
  assert.match(err, /must look like NAME@HOST/);
});

test.run();
