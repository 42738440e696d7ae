// API fuzzing: schemathesis (PyPI, scripts/fuzz-venv.sh) generates requests
// from our own OpenAPI document (/v1/openapi.json, src/api/openapi.ts) and
// sends them to the running facade, in noauth2 mode and in keystone mode
// (against the simulator's Keystone). Pinned:
// - zero server errors (5xx) and zero crashes, counted by the facade itself
//   (masakari_api_requests_total), over at least MIN_REQUESTS in total;
// - a negative-only run (every request invalid) changes no custom resource:
//   a 4xx never writes.
// The seed is fixed and printed, so a failure reproduces.
//
// Part of `make test` (run-tests.mjs mode `fuzz`, in `all`); `make fuzz`
// runs it alone. schemathesis's generation (hypothesis) is CPU-bound: about
// 11 requests/s on an idle 2-core machine, so the ~10,000 requests take
// about 15 minutes (the full CI run at 300/130 cases gave 9,106; 380/165 is
// that count with a quarter to spare). MASAKARI_FUZZ_EXAMPLES / MASAKARI_FUZZ_NEGATIVE_EXAMPLES
// set fewer cases per operation for a quick local run (the count test then
// fails, as it should).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { execFile } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startStack, type Stack } from '../e2e/support/stack.ts';
import { createKubeClient } from '../../src/k8s/kube-client.ts';
import { RESOURCES } from '../../src/k8s/resources.ts';

const run = promisify(execFile);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SEED = Number(process.env.MASAKARI_FUZZ_SEED ?? 20261201);
/** Requests over both modes that the facade must have answered (the issue asks for at least 10,000). */
const MIN_REQUESTS = 10_000;
/**
 * Test cases per API operation and run. A count, not a time budget, so that
 * a slow machine sends the same requests as a fast one, only later (with
 * --max-time the count fell to a few hundred under load). Negative runs
 * generate more slowly and find less: fewer of them.
 */
const EXAMPLES = {
  positive: Number(process.env.MASAKARI_FUZZ_EXAMPLES ?? 380),
  negative: Number(process.env.MASAKARI_FUZZ_NEGATIVE_EXAMPLES ?? 165),
};
/** Wall-clock cap of one schemathesis run (a hang, not slowness, is what it catches). */
const RUN_TIMEOUT_MS = 30 * 60_000;

let venv: Promise<string> | undefined;
const fuzzVenv = (): Promise<string> =>
  (venv ??= run('bash', [path.join(root, 'scripts/fuzz-venv.sh')], { timeout: 15 * 60_000 }).then(
    (r) => r.stdout.trim().split('\n').pop() as string,
  ));

/** masakari_api_requests_total summed, all and 5xx only. */
async function requestCounts(metricsUrl: string): Promise<{ all: number; server: number }> {
  const text = await (await fetch(`${metricsUrl}/metrics`)).text();
  let all = 0;
  let server = 0;
  for (const line of text.split('\n')) {
    const m = /^masakari_api_requests_total\{([^}]*)\} (\d+)/.exec(line);
    if (!m) continue;
    all += Number(m[2]);
    if (/status="5\d\d"/.test(m[1]!)) server += Number(m[2]);
  }
  return { all, server };
}

/** resourceVersion of every Masakari object in the namespace. */
async function snapshot(stack: Stack): Promise<Record<string, string>> {
  const kube = createKubeClient(stack.ns.kc);
  const out: Record<string, string> = {};
  for (const ref of [RESOURCES.segments, RESOURCES.hosts, RESOURCES.notifications]) {
    const list = await kube.list<{ metadata: { name: string; resourceVersion: string } }>(ref, stack.ns.namespace);
    for (const o of list.items) out[`${ref.plural}/${o.metadata.name}`] = o.metadata.resourceVersion;
  }
  await kube.close();
  return out;
}

async function keystoneToken(stack: Stack): Promise<string> {
  const c = stack.sim.credentials;
  const res = await fetch(`${c.OS_AUTH_URL!.replace(/\/$/, '')}/auth/tokens`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      auth: {
        identity: {
          methods: ['password'],
          password: {
            user: {
              name: c.OS_USERNAME,
              password: c.OS_PASSWORD,
              domain: { name: c.OS_USER_DOMAIN_NAME ?? 'Default' },
            },
          },
        },
        scope: {
          project: { name: c.OS_PROJECT_NAME, domain: { name: c.OS_PROJECT_DOMAIN_NAME ?? 'Default' } },
        },
      },
    }),
  });
  const token = res.headers.get('x-subject-token');
  if (!token) throw new Error(`no token from the simulator's Keystone: ${res.status} ${await res.text()}`);
  return token;
}

/**
 * The operations, in two halves run by two schemathesis processes at once:
 * its workers are threads of one Python process, so one process uses one core.
 */
const HALVES = [
  ['--include-path-regex', '^/v1/segments'],
  ['--exclude-path-regex', '^/v1/segments'],
];

/**
 * With a fixed token (keystone mode) these operations have nothing left to
 * make invalid (a free-form path id and a free-form version header), so a
 * negative run cannot generate a case for them and schemathesis reports a
 * schema error: a limit of negative generation, not of the API.
 */
const NOTHING_TO_NEGATE = '^(GET|DELETE) /v1/(segments/\\{segment_id\\}|notifications/\\{notification_id\\})$';

/** One schemathesis run over both halves; resolves with their output (each must exit 0: no failed check). */
async function schemathesis(
  stack: Stack,
  o: { mode: 'positive' | 'negative'; maxExamples: number; token?: string },
): Promise<string> {
  const outputs = await Promise.all(HALVES.map((half) => schemathesisProcess(stack, o, half)));
  return outputs.join('\n');
}

/**
 * CPython 3.11 (3.11.7 here) tracks the AST constructor's recursion depth in
 * state its threads share, so hypothesis describing a lambda (ast.parse) in
 * two worker threads at once can die with this SystemError: a tool crash that
 * reports no check at all. The seed makes it recur, so the one retry runs that
 * half in a single worker thread, where it cannot happen.
 */
const PYTHON_AST_RACE = 'AST constructor recursion depth mismatch';
class PythonAstRace extends Error {}

async function schemathesisProcess(
  stack: Stack,
  o: { mode: 'positive' | 'negative'; maxExamples: number; token?: string },
  half: string[],
): Promise<string> {
  try {
    return await schemathesisAttempt(stack, o, half, 2);
  } catch (e) {
    if (!(e instanceof PythonAstRace)) throw e;
    process.stdout.write(`[fuzz] schemathesis hit CPython 3.11's ${PYTHON_AST_RACE}: that half again in one worker\n`);
    return schemathesisAttempt(stack, o, half, 1);
  }
}

async function schemathesisAttempt(
  stack: Stack,
  o: { mode: 'positive' | 'negative'; maxExamples: number; token?: string },
  half: string[],
  workers: number,
): Promise<string> {
  const st = path.join(await fuzzVenv(), 'bin/st');
  const base = stack.operator.apiUrl;
  const auth = o.token
    ? [
        '--header',
        `X-Auth-Token: ${o.token}`,
        // The token is fixed: generating the security header too only makes cases the filter then drops.
        '--generation-with-security-parameters',
        'false',
        ...(o.mode === 'negative' ? ['--exclude-name-regex', NOTHING_TO_NEGATE] : []),
      ]
    : [];
  const args = [
    'run',
    `${base}/v1/openapi.json`,
    '--url',
    base,
    '--checks',
    'not_a_server_error',
    '--mode',
    o.mode,
    '--max-examples',
    String(o.maxExamples),
    '--seed',
    String(SEED),
    '--workers',
    String(workers),
    // The coverage phase's negative cases trip a CPython 3.11 ast.parse bug inside hypothesis when run
    // from several workers ("AST constructor recursion depth mismatch"): a tool error, not an API one.
    ...(o.mode === 'negative' ? ['--phases', 'examples,fuzzing'] : []),
    '--request-timeout',
    '10',
    '--no-shrink',
    '--suppress-health-check',
    'all',
    '--no-color',
    ...half,
    ...auth,
  ];
  process.stdout.write(`[fuzz] seed ${SEED}: st ${args.join(' ').replace(/X-Auth-Token: \S+/, 'X-Auth-Token: …')}\n`);
  try {
    // schemathesis keeps a cache in its working directory: a temporary one, never the checkout.
    const r = await run(st, args, {
      cwd: await mkdtemp(path.join(tmpdir(), 'schemathesis-')),
      timeout: RUN_TIMEOUT_MS,
      maxBuffer: 64 << 20,
      env: { ...process.env, NO_COLOR: '1' },
    });
    return r.stdout;
  } catch (e) {
    const err = e as { stdout?: string; stderr?: string; message: string };
    if (`${err.stdout ?? ''}${err.stderr ?? ''}`.includes(PYTHON_AST_RACE)) throw new PythonAstRace(err.message);
    throw new Error(
      `schemathesis failed (seed ${SEED}): ${err.message.replace(/X-Auth-Token: \S+/, 'X-Auth-Token: …')}\n${(err.stdout ?? '').slice(-6000)}\n${(err.stderr ?? '').slice(-2000)}`,
    );
  }
}

const fuzz = suite('schemathesis over /v1/openapi.json');
let total = 0;

for (const auth of ['noauth2', 'keystone'] as const) {
  fuzz(`${auth}: no 5xx, no crash; invalid requests change nothing`, async () => {
    await fuzzVenv();
    const stack = await startStack({
      prefix: `fuzz-${auth}`,
      components: 'api',
      auth,
      sim: { hosts: ['compute-1', 'compute-2'], servers: [] },
    });
    try {
      const token = auth === 'keystone' ? await keystoneToken(stack) : undefined;
      const before = await requestCounts(stack.operator.metricsUrl);
      const started = Date.now();
      await schemathesis(stack, { mode: 'positive', maxExamples: EXAMPLES.positive, token });
      const state = await snapshot(stack);
      await schemathesis(stack, { mode: 'negative', maxExamples: EXAMPLES.negative, token });
      assert.equal(await snapshot(stack), state, 'a request answered with 4xx changed a custom resource');
      const after = await requestCounts(stack.operator.metricsUrl);
      assert.ok(stack.operator.child.exitCode === null && stack.operator.child.signalCode === null, 'operator alive');
      assert.is(after.server - before.server, 0, `5xx answers\n${stack.operator.output().slice(-4000)}`);
      total += after.all - before.all;
      process.stdout.write(
        `[fuzz] ${auth}: ${after.all - before.all} requests answered in ${Math.round((Date.now() - started) / 1000)} s, 0 server errors\n`,
      );
    } finally {
      await stack.stop();
    }
  });
}

fuzz(`at least ${MIN_REQUESTS} requests over both modes`, () => {
  assert.ok(total >= MIN_REQUESTS, `${total} requests`);
});

fuzz.run();
