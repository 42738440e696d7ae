// The facade over HTTP: what the recorded reference scenarios cannot cover
// (keystone auth, policy, size limits, the OpenAPI document, metrics, Nova
// failures, workflow details at 1.1).

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { rejection } from '../testing/expect-error.ts';
import { startHarness } from './testing/harness.ts';
import type { Harness } from './testing/harness.ts';
import type { TokenIdentity, TokenValidator } from './auth.ts';
import { NovaForbidden, NovaError } from '../openstack/types.ts';
import { Forbidden, UnexpectedApiError } from '../domain/errors.ts';
import { StoreUnavailableError } from '../domain/repository.ts';
import { NovaComputeHostChecker } from '../openstack/compute-host-checker.ts';
import type { NovaClient } from '../openstack/types.ts';

const ADMIN: TokenIdentity = { userId: 'u-admin', projectId: 'p-admin', roles: ['admin', 'member'] };
const MEMBER: TokenIdentity = { userId: 'u-member', projectId: 'abc123', roles: ['member', 'reader'] };

class FakeTokens implements TokenValidator {
  down = false;
  seen: string[] = [];
  async validate(token: string): Promise<TokenIdentity | null> {
    this.seen.push(token);
    if (this.down) throw new Error('keystone unreachable');
    return token === 'admin-token' ? ADMIN : token === 'member-token' ? MEMBER : null;
  }
}

const segmentBody = (name: string) => ({ segment: { name, recovery_method: 'auto', service_type: 'COMPUTE' } });
const hostBody = (name: string) => ({ host: { name, type: 'COMPUTE', control_attributes: 'SSH' } });
const notificationBody = (hostname: string, time = '2026-01-01T00:00:00') => ({
  notification: {
    type: 'COMPUTE_HOST',
    hostname,
    generated_time: time,
    payload: { event: 'STOPPED', host_status: 'NORMAL', cluster_status: 'OFFLINE' },
  },
});

// ------------------------------------------------------------------ keystone
const keystone = suite<{ h: Harness; tokens: FakeTokens }>('keystone auth');

keystone.before.each(async (ctx) => {
  ctx.tokens = new FakeTokens();
  ctx.h = await startHarness({
    auth: { strategy: 'keystone', validator: ctx.tokens, wwwAuthenticateUri: 'http://keystone.example:5000' },
  });
});
keystone.after.each(async (ctx) => ctx.h.close());

keystone('a request without a token gets keystonemiddleware 401 with WWW-Authenticate', async ({ h }) => {
  const r = await h.request('GET', '/v1/segments');
  assert.is(r.status, 401);
  assert.is(r.headers['www-authenticate'], 'Keystone uri="http://keystone.example:5000"');
  assert.is(r.headers['content-type'], 'application/json');
  assert.is(
    r.text,
    '{"error": {"code": 401, "title": "Unauthorized", "message": "The request you have made requires authentication."}}',
  );
  assert.match(String(r.headers['x-openstack-request-id']), /^req-/);
  assert.is(r.headers['openstack-api-version'], undefined);
});

keystone('an invalid token gets the same 401; GET / needs no token', async ({ h }) => {
  assert.is((await h.request('GET', '/v1', { headers: { 'X-Auth-Token': 'bogus' } })).status, 401);
  assert.is((await h.request('GET', '/')).status, 200);
});

keystone('an admin token is allowed everywhere', async ({ h }) => {
  const r = await h.request('POST', '/v1/segments', {
    body: segmentBody('seg'),
    headers: { 'X-Auth-Token': 'admin-token' },
  });
  assert.is(r.status, 201);
  assert.is((await h.request('GET', '/v1/segments', { headers: { 'X-Auth-Token': 'admin-token' } })).status, 200);
});

keystone('a member token is refused with the policy message', async ({ h }) => {
  const r = await h.request('GET', '/v1/segments', { headers: { 'X-Auth-Token': 'member-token' } });
  assert.is(r.status, 403);
  assert.is(
    r.text,
    '{"forbidden": {"code": 403, "message": "Policy doesn\'t allow os_masakari_api:segments:index to be performed."}}',
  );
  assert.is(r.headers['openstack-api-version'], 'instance-ha 1.0');
});

keystone('identity headers sent by the client are ignored under keystone', async ({ h }) => {
  const r = await h.request('GET', '/v1/segments', {
    headers: { 'X-Auth-Token': 'member-token', 'X-Roles': 'admin', 'X-User-Id': 'root' },
  });
  assert.is(r.status, 403);
});

keystone('the body is validated before the policy, as in Masakari', async ({ h }) => {
  const r = await h.request('POST', '/v1/segments', {
    body: { segment: {} },
    headers: { 'X-Auth-Token': 'member-token' },
  });
  assert.is(r.status, 400);
});

keystone("the project id in the URL must be the token's project", async ({ h }) => {
  const mismatch = await h.request('GET', '/v1/abc/segments', { headers: { 'X-Auth-Token': 'admin-token' } });
  assert.is(mismatch.status, 400);
  assert.match(mismatch.json.badRequest.message, "URL's project_id 'abc' doesn't match Context's project_id 'p-admin'");
  const member = await h.request('GET', '/v1/abc123/segments', { headers: { 'X-Auth-Token': 'member-token' } });
  assert.is(member.status, 403);
});

keystone('a Keystone outage is a 503, not a 401 or a 500', async ({ h, tokens }) => {
  tokens.down = true;
  const r = await h.request('GET', '/v1/segments', { headers: { 'X-Auth-Token': 'admin-token' } });
  assert.is(r.status, 503);
  assert.match(r.text, 'The Keystone service is temporarily unavailable.');
});

keystone('the member can read the versions document but not the extensions', async ({ h }) => {
  assert.is((await h.request('GET', '/v1', { headers: { 'X-Auth-Token': 'member-token' } })).status, 200);
  assert.is((await h.request('GET', '/v1/extensions', { headers: { 'X-Auth-Token': 'member-token' } })).status, 403);
});

keystone.run();

// ------------------------------------------------------------------ policy file
const policy = suite('policy file');

policy('rules from a YAML policy file override the defaults', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'masakari-policy-'));
  const file = join(dir, 'policy.yaml');
  writeFileSync(
    file,
    [
      '"os_masakari_api:segments:index": "role:reader or rule:admin_api"',
      '"os_masakari_api:segments:create": "!"',
      '"os_masakari_api:extensions:discoverable": "@"',
      '"os_masakari_api:vmoves:discoverable": "not role:member"',
    ].join('\n'),
  );
  const tokens = new FakeTokens();
  const h = await startHarness({
    auth: { strategy: 'keystone', validator: tokens, wwwAuthenticateUri: 'http://k' },
    policy: { policyFile: file },
  });
  try {
    const member = { 'X-Auth-Token': 'member-token' };
    const admin = { 'X-Auth-Token': 'admin-token' };
    assert.is((await h.request('GET', '/v1/segments', { headers: member })).status, 200);
    const create = await h.request('POST', '/v1/segments', { body: segmentBody('x'), headers: admin });
    assert.is(create.status, 403);
    assert.match(create.text, 'os_masakari_api:segments:create');
    const ext = await h.request('GET', '/v1/extensions', { headers: admin });
    assert.equal(
      ext.json.extensions.map((e: { alias: string }) => e.alias),
      ['extensions', 'notifications', 'os-hosts', 'segments', 'versions'],
    );
  } finally {
    await h.close();
  }
});

policy('noauth2 makes every caller admin, as NoAuthMiddleware does', async () => {
  const h = await startHarness();
  try {
    const r = await h.request('POST', '/v1/segments', { body: segmentBody('x'), headers: { 'X-Roles': 'member' } });
    assert.is(r.status, 201);
    const ok = await h.request('GET', '/v1/abc/segments', { headers: { 'X-Project-Id': 'abc' } });
    assert.is(ok.status, 200);
  } finally {
    await h.close();
  }
});

policy.run();

// ------------------------------------------------------------------ pipeline
const pipeline = suite<{ h: Harness }>('pipeline');
pipeline.before.each(async (ctx) => {
  ctx.h = await startHarness();
});
pipeline.after.each(async (ctx) => ctx.h.close());

pipeline('a body over 114688 bytes is refused with oslo sizelimit 413 before auth and routing', async ({ h }) => {
  const r = await h.request('POST', '/v1/segments', { raw: 'x'.repeat(114689) });
  assert.is(r.status, 413);
  assert.is(r.headers['content-type'], 'text/plain; charset=UTF-8');
  assert.is(
    r.text,
    '413 Request Entity Too Large\n\nRequest is too large. Larger than max_request_body_size (%s).\n\n   ',
  );
  const json = await h.request('POST', '/v1/nowhere', {
    raw: 'x'.repeat(200000),
    headers: { Accept: 'application/json' },
  });
  assert.is(json.status, 413);
  assert.is(json.json.title, 'Request Entity Too Large');
});

pipeline('a body of exactly the limit is read', async ({ h }) => {
  const name = 'a'.repeat(10);
  const body = JSON.stringify(segmentBody(name));
  const r = await h.request('POST', '/v1/segments', { raw: body + ' '.repeat(114688 - body.length) });
  assert.is(r.status, 201);
});

pipeline('every /v1 response carries x-openstack-request-id; the root document does not', async ({ h }) => {
  assert.ok((await h.request('GET', '/v1/nowhere')).headers['x-openstack-request-id']);
  assert.ok((await h.request('GET', '/v1/segments')).headers['x-openstack-request-id']);
  assert.is((await h.request('GET', '/')).headers['x-openstack-request-id'], undefined);
});

pipeline('the OpenAPI document is served without auth and names every schema', async ({ h }) => {
  const r = await h.request('GET', '/v1/openapi.json');
  assert.is(r.status, 200);
  assert.is(r.json.openapi, '3.0.3');
  for (const s of ['segmentCreate', 'segmentCreateV12', 'hostCreate', 'notificationCreate', 'payloadVm']) {
    assert.ok(r.json.components.schemas[s], s);
  }
  assert.ok(r.json.paths['/v1/segments/{segment_id}/hosts/{host_id}'].put);
});

pipeline('requests are counted by route template and status', async ({ h }) => {
  await h.request('GET', '/v1/segments');
  await h.request('GET', '/v1/segments/abc');
  const text = await h.metrics.metrics();
  assert.match(text, /masakari_api_requests_total\{method="GET",route="\/v1\/segments",status="200"\} 1/);
  assert.match(text, /masakari_api_requests_total\{method="GET",route="\/v1\/segments\/\{id\}",status="404"\} 1/);
  assert.match(text, /masakari_api_request_duration_seconds_bucket/);
});

pipeline('/healthcheck answers OK in plain text', async ({ h }) => {
  const r = await h.request('GET', '/healthcheck');
  assert.is(r.status, 200);
  assert.is(r.text, 'OK');
});

pipeline(
  'notification show at 1.1 carries the recorded workflow details in order, progress as a float',
  async ({ h }) => {
    const seg = (await h.request('POST', '/v1/segments', { body: segmentBody('s') })).json.segment.uuid;
    await h.request('POST', `/v1/segments/${seg}/hosts`, { body: hostBody('compute-1') });
    const n = (await h.request('POST', '/v1/notifications', { body: notificationBody('compute-1') })).json.notification;
    h.repo.setNotificationState(n.notification_uuid, {
      status: 'finished',
      recovery_workflow_details: [
        {
          name: 'DisableComputeServiceTask',
          progress: 1,
          state: 'SUCCESS',
          progressDetails: [
            {
              timestamp: '2026-01-01 00:00:01.000001',
              progress: '0.0',
              message: 'Disabling compute service on host: compute-1',
            },
          ],
        },
      ],
    });
    const v10 = await h.request('GET', `/v1/notifications/${n.notification_uuid}`);
    assert.not.ok('recovery_workflow_details' in v10.json.notification);
    const v11 = await h.request('GET', `/v1/notifications/${n.notification_uuid}`, {
      headers: { 'OpenStack-API-Version': 'instance-ha 1.1' },
    });
    assert.match(
      v11.text,
      '"status": "finished", "recovery_workflow_details": [{"name": "DisableComputeServiceTask", "progress": 1.0, "progress_details": [{"timestamp": "2026-01-01 00:00:01.000001", "progress": "0.0", "message": "Disabling compute service on host: compute-1"}], "state": "SUCCESS"}], "failover_segment_uuid"',
    );
    const none = await h.request('POST', '/v1/notifications', {
      body: notificationBody('compute-1', '2026-06-01T00:00:00'),
    });
    const fresh = await h.request('GET', `/v1/notifications/${none.json.notification.notification_uuid}`, {
      headers: { 'OpenStack-API-Version': 'instance-ha 1.3' },
    });
    assert.equal(fresh.json.notification.recovery_workflow_details, []);
  },
);

pipeline('a vmove of another notification is not found under this one', async ({ h }) => {
  const seg = (await h.request('POST', '/v1/segments', { body: segmentBody('s') })).json.segment.uuid;
  await h.request('POST', `/v1/segments/${seg}/hosts`, { body: hostBody('compute-1') });
  await h.request('POST', `/v1/segments/${seg}/hosts`, { body: hostBody('compute-2') });
  const n1 = (await h.request('POST', '/v1/notifications', { body: notificationBody('compute-1') })).json.notification
    .notification_uuid;
  const n2 = (await h.request('POST', '/v1/notifications', { body: notificationBody('compute-2') })).json.notification
    .notification_uuid;
  const v = h.repo.addVMove(n1, {
    instance_uuid: '11111111-2222-3333-4444-555555555555',
    start_time: '2026-01-01T00:00:01.250000',
  });
  const own = await h.request('GET', `/v1/notifications/${n1}/vmoves/${v.uuid}`);
  assert.is(own.status, 200);
  assert.is(own.json.vmove.start_time, '2026-01-01T00:00:01.250000');
  const other = await h.request('GET', `/v1/notifications/${n2}/vmoves/${v.uuid}`);
  assert.is(other.status, 404);
  assert.is(other.json.itemNotFound.message, `No vm move with id ${v.uuid}.`);
  const unknown = await h.request('GET', `/v1/notifications/6f1b4b6e-0000-4000-8000-000000000000/vmoves/${v.uuid}`);
  assert.is(unknown.status, 404);
  assert.is(unknown.json.itemNotFound.message, 'No notification with id 6f1b4b6e-0000-4000-8000-000000000000.');
});

pipeline('Nova refusing the host check is a 403; Nova failing is the 500 Masakari gives', async ({ h }) => {
  const seg = (await h.request('POST', '/v1/segments', { body: segmentBody('s') })).json.segment.uuid;
  h.compute.fail = new Forbidden("Policy doesn't allow os_compute_api:os-services:list to be performed. (HTTP 403)");
  const forbidden = await h.request('POST', `/v1/segments/${seg}/hosts`, { body: hostBody('compute-1') });
  assert.is(forbidden.status, 403);
  assert.is(
    forbidden.json.forbidden.message,
    "Policy doesn't allow os_compute_api:os-services:list to be performed. (HTTP 403)",
  );
  h.compute.fail = new UnexpectedApiError('novaclient.exceptions.ClientException');
  const down = await h.request('POST', `/v1/segments/${seg}/hosts`, { body: hostBody('compute-1') });
  assert.is(down.status, 500);
  assert.is(down.json.masakariFault.code, 500);
  assert.match(
    down.json.masakariFault.message,
    "Unexpected API Error. Please report this at https://bugs.launchpad.net/masakari/ and attach the Masakari API log if possible.\n<class 'novaclient.exceptions.ClientException'>",
  );
});

pipeline('an API server failure while storing a notification is a 503 with Retry-After, not a 500', async ({ h }) => {
  const seg = (await h.request('POST', '/v1/segments', { body: segmentBody('s503') })).json.segment.uuid;
  h.compute.known.add('compute-503');
  await h.request('POST', `/v1/segments/${seg}/hosts`, { body: hostBody('compute-503') });
  const original = h.repo.createNotification.bind(h.repo);
  h.repo.createNotification = async () => {
    throw new StoreUnavailableError('notification intake: etcdserver: mvcc: database space exceeded', 2);
  };
  try {
    const r = await h.request('POST', '/v1/notifications', {
      body: {
        notification: {
          type: 'PROCESS',
          hostname: 'compute-503',
          generated_time: '2026-01-01T00:00:00',
          payload: { process_name: 'nova-compute', event: 'STOPPED' },
        },
      },
    });
    assert.is(r.status, 503);
    assert.is(r.headers['retry-after'], '2');
    assert.is(r.json.serviceUnavailable.code, 503);
  } finally {
    h.repo.createNotification = original;
  }
});

pipeline('a chunked body over the limit is refused with a 413 fault', async ({ h }) => {
  const http = await import('node:http');
  const status = await new Promise<number>((resolve, reject) => {
    const req = http.request(
      `${h.url}/v1/segments`,
      { method: 'POST', headers: { 'content-type': 'application/json' } },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', reject);
    req.write('x'.repeat(120000));
    req.end();
  });
  assert.is(status, 413);
});

pipeline("an OPTIONS request under /v1 is the cors filter's empty 200, even before authentication", async () => {
  const h = await startHarness({
    auth: { strategy: 'keystone', validator: new FakeTokens(), wwwAuthenticateUri: 'http://keystone.example:5000' },
  });
  try {
    for (const path of ['/v1', '/v1/segments', '/v1/segments/x/hosts/y', '/v1/nowhere']) {
      const r = await h.request('OPTIONS', path);
      assert.is(r.status, 200, path);
      assert.is(r.text, '', path);
      assert.is(r.headers['content-type'], undefined, path);
      assert.is(r.headers['x-openstack-request-id'], undefined, path);
    }
  } finally {
    await h.close();
  }
});

pipeline('runs of slashes in the path are collapsed before routing, as paste urlmap does', async ({ h }) => {
  const created = await h.request('POST', '/v1/segments', { body: segmentBody('s') });
  const id = created.json.segment.uuid as string;
  assert.is((await h.request('GET', '//v1/segments')).json.segments.length, 1);
  assert.is((await h.request('GET', `/v1//segments///${id}`)).json.segment.uuid, id);
  assert.equal((await h.request('GET', `/v1/segments/${id}//hosts`)).json, { hosts: [] });
  assert.is((await h.request('GET', '//')).status, 200);
});

pipeline('a HEAD request answered by a webob error page is empty HTML whatever Accept says', async ({ h }) => {
  const r = await h.request('HEAD', '/v1/segments', { headers: { Accept: 'application/json' } });
  assert.is(r.status, 404);
  assert.is(r.headers['content-type'], 'text/html; charset=UTF-8');
  assert.is(r.headers['content-length'], '0');
});

pipeline('percent escapes in the path decode to latin-1 characters, invalid ones stay', async ({ h }) => {
  const utf8 = await h.request('GET', '/v1/segments/caf%C3%A9%FF');
  assert.is(utf8.json.itemNotFound.message, 'No failover segment with id caf\u00c3\u00a9\u00ff.');
  const invalid = await h.request('GET', '/v1/segments/%20x%ZZ');
  assert.is(invalid.json.itemNotFound.message, 'No failover segment with id  x%ZZ.');
  const choices = await h.request('GET', '/caf%C3%A9/x%20y%ZZ');
  assert.is(choices.json.choices[0].links[0].href, `${h.url}/v1/caf%C3%A9/x%20y%25ZZ`);
});

pipeline('a query string that is not UTF-8 is read with replacement characters, never a 500', async ({ h }) => {
  assert.equal((await h.request('GET', '/v1/segments?service_type=%FF')).json, { segments: [] });
  const sort = await h.request('GET', '/v1/segments?sort_key=%FF');
  assert.is(sort.status, 400);
  assert.is(sort.json.badRequest.message, "InvalidSortKey('Sort key supplied is invalid: \ufffd')");
  assert.is((await h.request('GET', '/v1/notifications?generated-since=%FF')).status, 400);
});

pipeline("limit is read as Python int() reads it: underscores and any script's digits", async ({ h }) => {
  for (const name of ['a', 'b', 'c']) await h.request('POST', '/v1/segments', { body: segmentBody(name) });
  assert.is((await h.request('GET', '/v1/segments?limit=%D9%A2')).json.segments.length, 2);
  assert.is((await h.request('GET', '/v1/segments?limit=0_1')).json.segments.length, 1);
  const bad = await h.request('GET', '/v1/segments?limit=1__0');
  assert.is(bad.json.badRequest.message, 'Invalid input received: limit must be an integer');
});

pipeline('a body that is not UTF-8 is malformed instead of stored with replacement characters', async ({ h }) => {
  const http = await import('node:http');
  const latin1 = Buffer.from(JSON.stringify(segmentBody('caf\u00e9')), 'latin1');
  const answer = await new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = http.request(
      `${h.url}/v1/segments`,
      { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': latin1.length } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    req.on('error', reject);
    req.end(latin1);
  });
  assert.is(answer.status, 400);
  assert.is(answer.text, '{"badRequest": {"code": 400, "message": "Malformed request body"}}');
  assert.equal((await h.request('GET', '/v1/segments')).json, { segments: [] });
  const bom = await h.request('POST', '/v1/segments', { raw: `\ufeff${JSON.stringify(segmentBody('bom'))}` });
  assert.is(bom.status, 400);
});

pipeline('an empty chunked body is no body at all, as webob counts it', async ({ h }) => {
  const http = await import('node:http');
  const answer = await new Promise<string>((resolve, reject) => {
    const req = http.request(
      `${h.url}/v1/segments`,
      { method: 'POST', headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
      },
    );
    req.on('error', reject);
    req.end();
  });
  assert.is(answer, '{"badRequest": {"code": 400, "message": "None is not of type \'object\'"}}');
});

pipeline('a body nested deeper than Python can decode is a 400, never a 500', async ({ h }) => {
  for (const depth of [2000, 20000]) {
    const r = await h.request('POST', '/v1/segments', { raw: `{"segment": ${'['.repeat(depth)}${']'.repeat(depth)}}` });
    assert.is(r.status, 400, String(depth));
  }
});

pipeline.run();

// ------------------------------------------------------------------ Nova host check
const nova = suite('NovaComputeHostChecker');

function novaWith(listServices: NovaClient['listServices']): NovaClient {
  return { listServices } as unknown as NovaClient;
}

nova('matches the host name case-sensitively among nova-compute services', async () => {
  let query: unknown;
  const checker = new NovaComputeHostChecker(
    novaWith(async (q) => {
      query = q;
      return [
        {
          id: '1',
          binary: 'nova-compute',
          host: 'Compute-1',
          status: 'enabled',
          state: 'up',
          disabled_reason: null,
          forced_down: false,
        },
      ];
    }),
  );
  assert.is(await checker.exists('compute-1'), false);
  assert.is(await checker.exists('Compute-1'), true);
  assert.equal(query, { binary: 'nova-compute', host: 'Compute-1' });
});

nova('translates Nova errors as Masakari does', async () => {
  const forbidden = new NovaComputeHostChecker(
    novaWith(async () => Promise.reject(new NovaForbidden(403, 'Policy says no'))),
  );
  assert.is((await rejection(forbidden.exists('x'), Forbidden)).message, 'Policy says no (HTTP 403)');
  const down = new NovaComputeHostChecker(
    novaWith(async () => Promise.reject(new NovaError(0, 'connect ECONNREFUSED'))),
  );
  const unexpected = await rejection(down.exists('x'), UnexpectedApiError);
  assert.is(unexpected.status, 500);
  assert.match(unexpected.message, "<class 'masakari.exception.MasakariException'>");
  const broken = new NovaComputeHostChecker(
    novaWith(async () => Promise.reject(new NovaError(503, 'Service Unavailable'))),
  );
  await broken.exists('x').then(
    () => assert.unreachable(),
    (e) => assert.match(e.message, "<class 'novaclient.exceptions.ClientException'>"),
  );
});

nova.run();
