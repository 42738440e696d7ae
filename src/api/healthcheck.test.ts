import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { healthcheckReply } from './healthcheck.ts';

test('HEAD /healthcheck is a bare 204 when ready and 503 when not', () => {
  assert.equal(healthcheckReply('HEAD', undefined, true), { status: 204, headers: {}, body: '' });
  assert.equal(healthcheckReply('HEAD', 'application/json', false), { status: 503, headers: {}, body: '' });
});

test('GET /healthcheck answers in the format Accept prefers, plain text by default', () => {
  assert.equal(healthcheckReply('GET', undefined, true), {
    status: 200,
    headers: { 'content-type': 'text/plain; charset=UTF-8' },
    body: 'OK',
  });
  assert.is(healthcheckReply('GET', '*/*', true).body, 'OK');
  assert.is(healthcheckReply('GET', 'image/png', false).body, 'NOT READY');
  const json = healthcheckReply('GET', 'application/*', false);
  assert.is(json.status, 503);
  assert.is(json.headers['content-type'], 'application/json');
  assert.is(json.body, '{\n    "detailed": false,\n    "reasons": [\n        "NOT READY"\n    ]\n}');
  const html = healthcheckReply('POST', 'text/html', true);
  assert.is(html.headers['content-type'], 'text/html; charset=UTF-8');
  assert.match(html.body, '<H2>Result of 1 checks:</H2>');
  assert.match(html.body, '    <TD>OK</TD>\n');
});

test.run();
