import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { componentLogger, createLogger, newRequestId, requestLogger } from './logger.ts';

function capture() {
  const lines: Array<Record<string, unknown>> = [];
  const log = createLogger({
    level: 'debug',
    identity: 'pod-0',
    version: '1.2.3',
    destination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
  });
  return { log, lines };
}

test('lines are JSON with level name, ISO time, identity and version', () => {
  const { log, lines } = capture();
  log.info('hello');
  const [line] = lines;
  assert.is(line!.level, 'info');
  assert.is(line!.msg, 'hello');
  assert.is(line!.identity, 'pod-0');
  assert.is(line!.version, '1.2.3');
  assert.match(String(line!.time), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
});

test('the level filters lower levels', () => {
  const { log, lines } = capture();
  log.trace('hidden');
  log.debug('shown');
  assert.equal(
    lines.map((l) => l.msg),
    ['shown'],
  );
});

test('request and component children carry request_id and component', () => {
  const { log, lines } = capture();
  const id = newRequestId();
  assert.match(id, /^req-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  requestLogger(componentLogger(log, 'api'), id).info('handled');
  assert.is(lines[0]!.request_id, id);
  assert.is(lines[0]!.component, 'api');
});

test('passwords, secrets and tokens are never written', () => {
  const { log, lines } = capture();
  log.info(
    {
      password: 'p1',
      creds: { password: 'p2', application_credential_secret: 's1' },
      req: { headers: { 'x-auth-token': 't1', accept: 'application/json' } },
    },
    'login',
  );
  const text = JSON.stringify(lines[0]);
  for (const secret of ['p1', 'p2', 's1', 't1']) assert.not.match(text, `"${secret}"`);
  assert.match(text, '"accept":"application/json"');
});

test('sensitive keys are redacted at any depth, os_privileged_user_password included', () => {
  const { log, lines } = capture();
  log.info(
    {
      config: {
        DEFAULT: { os_privileged_user_password: 'p3', os_privileged_user_name: 'admin' },
        keystone_authtoken: { auth: { nested: { deeper: { password: 'p4', Secret_Key: 's2' } } } },
      },
      list: [{ credential: 'c1' }, { auth_token: 't2' }],
    },
    'loaded',
  );
  const text = JSON.stringify(lines);
  for (const secret of ['p3', 'p4', 's2', 'c1', 't2']) assert.not.match(text, `"${secret}"`);
  assert.match(text, '"os_privileged_user_name":"admin"');
  assert.match(text, '"os_privileged_user_password":"[redacted]"');
});

test("a child logger's bindings are redacted too, at any depth and in the child's children", () => {
  const { log, lines } = capture();
  const child = log.child({ component: 'engine', auth: { os_privileged_user_password: 'p5', token: 't3' } });
  child.child({ nested: { application_credential_secret: 's3' }, request_id: 'req-1' }).info('work');
  const text = JSON.stringify(lines);
  for (const secret of ['p5', 't3', 's3']) assert.not.match(text, `"${secret}"`);
  assert.match(text, '"component":"engine"');
  assert.match(text, '"request_id":"req-1"');
});

test('redaction leaves objects without sensitive keys untouched (no copy)', async () => {
  const { redactSensitive } = await import('./logger.ts');
  const plain = { a: { b: [1, { c: 'x' }] } };
  assert.is(redactSensitive(plain), plain);
  const deep: Record<string, unknown> = {};
  let at = deep;
  for (let i = 0; i < 20; i++) at = (at.next = {}) as Record<string, unknown>;
  assert.ok(JSON.stringify(redactSensitive(deep)).includes('[redacted]'), 'bounded depth');
});

test.run();
