// The 'api' component: listens where the configuration says, serves the
// facade, reports readiness, stops cleanly.

import http from 'node:http';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createComponent } from './component.ts';
import type { ApiRepository } from './component.ts';
import { MemoryRepository } from '../domain/testing/memory-repository.ts';
import { componentContext as context } from './testing/component-context.ts';
import { startComponent } from '../testing/component.ts';

function memoryStore(): ApiRepository & { started: boolean; stopped: boolean } {
  const repo = new MemoryRepository() as MemoryRepository & ApiRepository & { started: boolean; stopped: boolean };
  repo.started = false;
  repo.stopped = false;
  repo.start = async () => {
    repo.started = true;
  };
  repo.stop = () => {
    repo.stopped = true;
  };
  repo.ready = () => repo.started && !repo.stopped;
  return repo;
}

function get(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path }, (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .on('error', reject);
  });
}

test('keystone without OpenStack credentials is refused at start, before anything is opened', async () => {
  const ctx = context();
  ctx.config.DEFAULT.auth_strategy = 'keystone';
  const repo = memoryStore();
  await startComponent(ctx, (app) =>
    createComponent(app, { repository: repo, listen: { host: '127.0.0.1', port: 0 } }),
  ).then(
    () => assert.unreachable('should not start'),
    (e: Error) => assert.match(e.message, 'auth_strategy = keystone needs OpenStack credentials'),
  );
  assert.not.ok(repo.started);
});

test('the component serves the facade over its repository and stops cleanly', async () => {
  const repo = memoryStore();
  const c = await startComponent(context(), (app) =>
    createComponent(app, { repository: repo, listen: { host: '127.0.0.1', port: 0 } }),
  );
  try {
    assert.is(c.name, 'api');
    assert.ok(repo.started);
    assert.ok(c.ready());
    const port = c.address().port;
    const r = await get(port, '/v1/segments');
    assert.is(r.status, 200);
    assert.is(r.body, '{"segments": []}');
  } finally {
    await c.stop();
  }
  assert.ok(repo.stopped);
  assert.not.ok(c.ready());
});

test('without Nova, adding a host is the 500 Masakari gives when Nova cannot be reached', async () => {
  const repo = memoryStore();
  const c = await startComponent(context(), (app) =>
    createComponent(app, { repository: repo, listen: { host: '127.0.0.1', port: 0 } }),
  );
  try {
    const seg = await repo.createSegment({
      name: 's',
      service_type: 'x',
      recovery_method: 'auto',
      description: null,
      enabled: true,
    });
    const body = JSON.stringify({ host: { name: 'compute-1', type: 'X', control_attributes: 'x' } });
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port: c.address().port,
          path: `/v1/segments/${seg.uuid}/hosts`,
          method: 'POST',
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
    assert.is(status, 500);
  } finally {
    await c.stop();
  }
});

test('a port already in use fails the start and releases the repository', async () => {
  const blocker = http.createServer();
  await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
  const port = (blocker.address() as { port: number }).port;
  const repo = memoryStore();
  try {
    await startComponent(context(), (app) =>
      createComponent(app, { repository: repo, listen: { host: '127.0.0.1', port } }),
    ).then(
      () => assert.unreachable('should not start'),
      (e: NodeJS.ErrnoException) => assert.is(e.code, 'EADDRINUSE'),
    );
    assert.ok(repo.stopped);
  } finally {
    await new Promise<void>((r) => blocker.close(() => r()));
  }
});

test.run();
