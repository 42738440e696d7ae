import { createServer } from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { rejection } from '../testing/expect-error.ts';
import { FakeKube } from '../testing/fake-kube.ts';
import { RESOURCES } from '../k8s/resources.ts';
import type { ComponentName } from '../config/options.ts';
import type { AppContext, Component, ComponentFactory } from './component.ts';
import { StartupError } from './components.ts';
import { runOperator, type RunOptions } from './run.ts';
import { KubeWriteHealth } from './kube-write-health.ts';
import type { TransportOptions } from '../k8s/transport.ts';
import { ConfigError } from '../config/load.ts';
import { freePort } from '../../tools/controlplane/ports.ts';

/** A component the test drives: ready flag, stop behaviour, and a record of what happened. */
class FakeComponent implements Component {
  isReady = false;
  stopped = false;
  ctx: AppContext | undefined;
  constructor(
    readonly name: string,
    readonly events: string[],
    private readonly stopBehaviour: 'ok' | 'hang' | 'throw' = 'ok',
  ) {}
  ready(): boolean {
    return this.isReady;
  }
  async stop(): Promise<void> {
    this.events.push(`stop ${this.name}`);
    if (this.stopBehaviour === 'hang') return new Promise(() => {});
    if (this.stopBehaviour === 'throw') throw new Error('stop failed');
    this.stopped = true;
  }
}

interface Harness {
  port: number;
  events: string[];
  components: Map<string, FakeComponent>;
  logs: Array<Record<string, unknown>>;
  kubeClosed: () => boolean;
  kube: FakeKube;
  stop: (signal?: string) => void;
  run: Promise<number>;
  listening: Promise<void>;
}

async function start(
  env: Record<string, string>,
  factories: Partial<
    Record<ComponentName, (events: string[], ctx: AppContext) => FakeComponent | Promise<FakeComponent>>
  > = {},
  overrides: Partial<RunOptions> = {},
): Promise<Harness> {
  const port = await freePort();
  const events: string[] = [];
  const components = new Map<string, FakeComponent>();
  const logs: Array<Record<string, unknown>> = [];
  let stop!: (signal: string) => void;
  const shutdownRequested = new Promise<string>((r) => (stop = r));
  let kubeClosed = false;
  const kube = new FakeKube();
  let listened!: () => void;
  const listening = new Promise<void>((r) => (listened = r));
  const options: RunOptions = {
    env: { MASAKARI_METRICS_LISTEN: `127.0.0.1:${port}`, MASAKARI_COMPONENTS: 'api,engine', ...env },
    shutdownRequested,
    loadFactory: async (name) => {
      const factory: ComponentFactory = async (ctx) => {
        events.push(`start ${name}`);
        const make = factories[name] ?? ((ev: string[]) => new FakeComponent(name, ev));
        const c = await make(events, ctx);
        c.ctx = ctx;
        components.set(name, c);
        return c;
      };
      return factory;
    },
    connectKube: () => ({
      client: kube,
      close: async () => {
        kubeClosed = true;
      },
    }),
    logDestination: { write: (line: string) => void logs.push(JSON.parse(line) as Record<string, unknown>) },
    onListening: () => listened(),
    ...overrides,
  };
  const run = runOperator(options);
  return {
    port,
    events,
    components,
    logs,
    kubeClosed: () => kubeClosed,
    kube,
    stop: (signal = 'SIGTERM') => stop(signal),
    run,
    listening,
  };
}

async function get(port: number, path: string): Promise<{ status: number; body: string; type: string | null }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: res.status, body: await res.text(), type: res.headers.get('content-type') };
}

async function until(check: () => boolean | Promise<boolean>, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

test('readyz is 503 naming the components that are not ready, 200 once all are', async () => {
  const h = await start({});
  await h.listening;
  await until(() => h.components.size === 2);
  assert.is((await get(h.port, '/healthz')).status, 200);
  const notReady = await get(h.port, '/readyz');
  assert.is(notReady.status, 503);
  assert.equal(JSON.parse(notReady.body), {
    status: 'not ready',
    phase: 'running',
    components: { api: false, engine: false, 'kube-writes': true },
    not_ready: ['api', 'engine'],
  });
  h.components.get('api')!.isReady = true;
  assert.equal(JSON.parse((await get(h.port, '/readyz')).body).not_ready, ['engine']);
  h.components.get('engine')!.isReady = true;
  const ready = await get(h.port, '/readyz');
  assert.is(ready.status, 200);
  assert.is(JSON.parse(ready.body).status, 'ready');
  h.stop();
  assert.is(await h.run, 0);
});

test('readyz is 503 while the API server has committed none of our writes for a while (etcd without quorum)', async () => {
  let now = 0;
  let report: TransportOptions['onAttempt'];
  const h = await start(
    {},
    {},
    {
      kubeWriteHealth: new KubeWriteHealth(() => now, 30_000),
      connectKube: (_env, onAttempt) => {
        report = onAttempt;
        return { client: new FakeKube(), close: async () => undefined };
      },
    },
  );
  await h.listening;
  await until(() => h.components.size === 2);
  for (const c of h.components.values()) c.isReady = true;
  assert.is((await get(h.port, '/readyz')).status, 200);
  const attempt = (method: 'GET' | 'POST' | 'PUT', code: number) =>
    report!({ method, code, resource: 'configmaps', durationMs: 10_000 });
  attempt('PUT', 504);
  now = 20_000;
  attempt('GET', 200); // a read from the watch cache proves nothing about writes
  attempt('POST', 0);
  assert.is((await get(h.port, '/readyz')).status, 200, 'a short outage stays ready');
  now = 31_000;
  const body = JSON.parse((await get(h.port, '/readyz')).body) as { not_ready: string[] };
  assert.equal(body.not_ready, ['kube-writes']);
  const metrics = (await get(h.port, '/metrics')).body;
  assert.match(metrics, /masakari_kube_writes_failing_seconds 31/);
  assert.match(metrics, /masakari_kube_write_failures_total\{code="504"\} 1/);
  assert.match(metrics, /masakari_kube_write_failures_total\{code="0"\} 1/);
  attempt('PUT', 409); // answered by a working API server and etcd
  assert.is((await get(h.port, '/readyz')).status, 200);
  assert.match((await get(h.port, '/metrics')).body, /masakari_kube_writes_failing_seconds 0/);
  h.stop();
  assert.is(await h.run, 0);
});

test('metrics expose process metrics, build info and per-component readiness', async () => {
  const h = await start({ MASAKARI_COMPONENTS: 'engine' });
  await h.listening;
  await until(() => h.components.size === 1);
  h.components.get('engine')!.isReady = true;
  const m = await get(h.port, '/metrics');
  assert.is(m.status, 200);
  assert.match(m.type ?? '', 'text/plain');
  assert.match(m.body, 'process_cpu_user_seconds_total');
  assert.match(m.body, /masakari_operator_build_info\{version="[^"]+",node_version="[^"]+"\} 1/);
  assert.match(m.body, 'masakari_operator_component_ready{component="engine"} 1');
  h.stop();
  assert.is(await h.run, 0);
});

test('ops endpoint answers 404 for unknown paths and 405 for other methods', async () => {
  const h = await start({});
  await h.listening;
  assert.is((await get(h.port, '/debug/config')).status, 404);
  const res = await fetch(`http://127.0.0.1:${h.port}/readyz`, { method: 'POST' });
  assert.is(res.status, 405);
  assert.is(res.headers.get('allow'), 'GET, HEAD');
  h.stop();
  await h.run;
});

test('with prometheus_listen, /metrics is served there alone and the probes stay on metrics_listen', async () => {
  const metricsPort = await freePort();
  const h = await start({ MASAKARI_PROMETHEUS_LISTEN: `127.0.0.1:${metricsPort}` });
  await h.listening;
  await until(() => h.components.size === 2);
  assert.is((await get(h.port, '/healthz')).status, 200);
  const moved = await get(h.port, '/metrics');
  assert.is(moved.status, 404);
  assert.match(moved.body, 'try /healthz or /readyz');
  await until(async () => (await get(metricsPort, '/metrics').catch(() => ({ status: 0 }))).status === 200);
  assert.match((await get(metricsPort, '/metrics')).body, 'masakari_operator_build_info');
  const probe = await get(metricsPort, '/healthz');
  assert.is(probe.status, 404);
  assert.match(probe.body, 'try /metrics');
  h.stop();
  assert.is(await h.run, 0);
});

test('components get the context: namespace, identity, the process logger and the shutdown signal', async () => {
  const h = await start({ MASAKARI_NAMESPACE: 'ha-test', POD_NAME: 'masakari-0' });
  await until(() => h.components.size === 2);
  const ctx = h.components.get('api')!.ctx!;
  assert.is(ctx.namespace, 'ha-test');
  assert.is(ctx.identity, 'masakari-0');
  assert.is(ctx.config.operator.namespace, 'ha-test');
  assert.is(ctx.nova, undefined, 'no credentials, no Nova');
  assert.is(ctx.openstack, undefined);
  assert.is(ctx.signal.aborted, false);
  ctx.log.info('hello');
  assert.ok(h.logs.some((l) => l.msg === 'hello' && l.identity === 'masakari-0'));
  h.stop();
  assert.is(await h.run, 0);
  assert.is(ctx.signal.aborted, true);
});

test("the admission key is read or made in admission_key_namespace (the operator's), never in the objects' namespace", async () => {
  const h = await start({ MASAKARI_NAMESPACE: 'ha-objects', MASAKARI_ADMISSION_KEY_NAMESPACE: 'masakari-system' });
  await until(() => h.components.size === 2);
  assert.ok(h.components.get('api')!.ctx!.admissionSeal, 'the process seals');
  const secrets = (ns: string) => h.kube.list<{ metadata: { name: string } }>(RESOURCES.secrets, ns);
  assert.equal(
    (await secrets('masakari-system')).items.map((s) => s.metadata.name),
    ['masakari-admission-seal'],
  );
  assert.equal((await secrets('ha-objects')).items, []);
  h.stop();
  assert.is(await h.run, 0);
});

test("without admission_key_namespace the key stays in the objects' namespace, and the log says who can read it", async () => {
  const h = await start({ MASAKARI_NAMESPACE: 'ha-objects' });
  await until(() => h.components.size === 2);
  const secrets = await h.kube.list<{ metadata: { name: string } }>(RESOURCES.secrets, 'ha-objects');
  assert.equal(
    secrets.items.map((s) => s.metadata.name),
    ['masakari-admission-seal'],
  );
  assert.ok(
    h.logs.some((l) => String(l.msg).startsWith('the admission key is kept in the namespace of the Masakari objects')),
  );
  h.stop();
  assert.is(await h.run, 0);
});

test('shutdown aborts the signal, stops components in reverse order, closes clients, exits 0', async () => {
  const h = await start({ MASAKARI_COMPONENTS: 'api,engine,remediation' });
  await until(() => h.components.size === 3);
  await h.listening;
  h.stop('SIGINT');
  assert.is(await h.run, 0);
  assert.equal(h.events, [
    'start api',
    'start engine',
    'start remediation',
    'stop remediation',
    'stop engine',
    'stop api',
  ]);
  assert.ok(h.kubeClosed());
  await fetch(`http://127.0.0.1:${h.port}/healthz`).then(
    () => assert.unreachable('ops server should be closed'),
    () => undefined,
  );
  assert.ok(h.logs.some((l) => l.msg === 'shutting down' && l.signal === 'SIGINT'));
});

test('a component that overruns the shutdown deadline makes the exit code 1, the others still stop', async () => {
  const h = await start(
    { MASAKARI__OPERATOR__SHUTDOWN_TIMEOUT: '1' },
    { engine: (ev) => new FakeComponent('engine', ev, 'hang') },
  );
  await until(() => h.components.size === 2);
  const begun = Date.now();
  h.stop();
  assert.is(await h.run, 1);
  assert.ok(Date.now() - begun < 2500, 'the deadline bounds the shutdown');
  assert.ok(h.components.get('api')!.stopped);
  assert.ok(
    h.logs.some((l) => l.msg === 'component did not stop before the shutdown deadline' && l.component === 'engine'),
  );
});

test('a component whose stop throws makes the exit code 1', async () => {
  const h = await start({}, { api: (ev) => new FakeComponent('api', ev, 'throw') });
  await until(() => h.components.size === 2);
  h.stop();
  assert.is(await h.run, 1);
  assert.ok(h.components.get('engine')!.stopped);
});

test('a component that fails to start stops those already started and fails naming it', async () => {
  const h = await start(
    { MASAKARI_COMPONENTS: 'api,engine,remediation' },
    {
      engine: () => {
        throw new Error('cannot sync caches');
      },
    },
  );
  assert.is((await rejection(h.run, StartupError)).message, 'component engine: start failed: cannot sync caches');
  assert.equal(h.events, ['start api', 'start engine', 'stop api']);
  assert.ok(h.kubeClosed());
});

test('a signal during start-up aborts ctx.signal and the process exits 0', async () => {
  let seen: AbortSignal | undefined;
  const h = await start(
    { MASAKARI_COMPONENTS: 'engine' },
    {
      // Waits for its caches until the signal aborts it.
      engine: (_events, ctx) =>
        new Promise<FakeComponent>((_resolve, reject) => {
          seen = ctx.signal;
          ctx.signal.addEventListener('abort', () => reject(new Error('aborted while syncing')));
        }),
    },
  );
  await until(() => seen !== undefined);
  h.stop();
  assert.is(await h.run, 0);
  assert.ok(seen?.aborted);
  assert.ok(h.logs.some((l) => l.msg === 'masakari-operator stopped during start-up'));
});

test('a bad option fails before anything starts, naming the option', async () => {
  const h = await start({ MASAKARI__DEFAULT__OSAPI_MAX_LIMIT: '-5' });
  assert.match(
    (await rejection(h.run, ConfigError)).message,
    '[DEFAULT] osapi_max_limit must be an integer >= 1, got "-5"',
  );
  assert.equal(h.events, []);
});

test('an occupied ops port fails naming metrics_listen', async () => {
  const blocker = createServer();
  await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
  const { port } = blocker.address() as { port: number };
  const h = await start({ MASAKARI_METRICS_LISTEN: `127.0.0.1:${port}` });
  try {
    assert.match(
      (await rejection(h.run, StartupError)).message,
      `cannot listen on 127.0.0.1:${port} ([operator] metrics_listen`,
    );
  } finally {
    blocker.close();
  }
  assert.equal(h.events, []);
  assert.ok(h.kubeClosed());
});

test.run();
