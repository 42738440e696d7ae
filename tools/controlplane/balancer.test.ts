// The HA control plane's TCP balancer: connections go to the backends in
// turn, a backend that refuses is skipped, with no backend the client is
// reset, and resetAll() resets every proxied connection at once.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { connect, createServer } from 'node:net';
import type { Server, Socket } from 'node:net';
import { startBalancer } from './balancer.ts';
import { freePort } from './ports.ts';

/** A backend that answers each line with its name. */
async function backend(name: string): Promise<{ port: number; server: Server }> {
  const port = await freePort();
  const server = createServer((s) => {
    s.on('error', () => undefined);
    s.on('data', () => s.write(`${name}\n`));
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  return { port, server };
}

function client(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port }, () => resolve(s));
    s.once('error', reject);
  });
}

/** Sends a line, resolves with the answer, or with the error/close that ended the connection. */
function ask(s: Socket): Promise<string> {
  return new Promise((resolve) => {
    s.once('data', (d: Buffer) => resolve(d.toString().trim()));
    s.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
    s.once('close', () => resolve('closed'));
    s.write('hi\n');
  });
}

test('spreads connections over the backends, skips one that refuses, resets the client when none answers', async () => {
  const a = await backend('a');
  const b = await backend('b');
  const dead = await freePort();
  let ports = [a.port, dead, b.port];
  const lb = await startBalancer(await freePort(), () => ports);
  const sockets: Socket[] = [];
  try {
    const answers = new Set<string>();
    for (let i = 0; i < 6; i++) {
      const s = await client(lb.port);
      sockets.push(s);
      answers.add(await ask(s));
    }
    assert.equal([...answers].sort(), ['a', 'b'], 'both live backends serve, the dead one is skipped');
    assert.is(lb.connections(), 6);

    ports = [dead];
    const orphan = await client(lb.port);
    sockets.push(orphan);
    assert.ok(['ECONNRESET', 'closed'].includes(await ask(orphan)), 'no backend: the client is reset');
  } finally {
    for (const s of sockets) s.destroy();
    await lb.close();
    a.server.close();
    b.server.close();
  }
});

test('resetAll resets every proxied connection at once; new connections work afterwards', async () => {
  const a = await backend('a');
  const lb = await startBalancer(await freePort(), () => [a.port]);
  const sockets: Socket[] = [];
  try {
    for (let i = 0; i < 3; i++) {
      const s = await client(lb.port);
      sockets.push(s);
      assert.is(await ask(s), 'a');
    }
    const ended = sockets.map(
      (s) =>
        new Promise<string>((resolve) => {
          s.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
          s.once('close', () => resolve('closed'));
        }),
    );
    assert.is(lb.resetAll(), 3);
    assert.equal(await Promise.all(ended), ['ECONNRESET', 'ECONNRESET', 'ECONNRESET']);
    assert.is(lb.connections(), 0);
    const again = await client(lb.port);
    sockets.push(again);
    assert.is(await ask(again), 'a');
  } finally {
    for (const s of sockets) s.destroy();
    await lb.close();
    a.server.close();
  }
});

test.run();
