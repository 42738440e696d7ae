// The URL map against what the Routes library answers for Masakari's mapper
// (each expectation was produced by masakari.api.openstack.ha.APIRouterV1's
// mapper.routematch on the same method and path).

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { matchV1 } from './routes.ts';

type Expected = [string, string, Record<string, string> | null, string?];

const TABLE: Expected[] = [
  ['GET', '', { resource: 'versions', action: 'show' }],
  ['GET', '/', { resource: 'versions', action: 'show' }],
  ['POST', '/', null],
  ['GET', '/segments', { resource: 'segments', action: 'index' }],
  ['GET', '/segments/', null],
  ['GET', '/segments.json', { resource: 'segments', action: 'index', format: 'json' }],
  ['GET', '/segments.xml', { resource: 'segments', action: 'index', format: 'xml' }],
  ['GET', '/segments/new', { resource: 'segments', action: 'new' }],
  ['GET', '/segments/abc', { resource: 'segments', action: 'show', id: 'abc' }],
  ['GET', '/segments/abc.json', { resource: 'segments', action: 'show', id: 'abc', format: 'json' }],
  ['GET', '/segments/a.b.json', { resource: 'segments', action: 'show', id: 'a.b', format: 'json' }],
  ['GET', '/segments/abc.txt', { resource: 'segments', action: 'show', id: 'abc.txt' }],
  ['GET', '/segments/abc/edit', { resource: 'segments', action: 'edit', id: 'abc' }],
  ['POST', '/segments/abc/action', { resource: 'segments', action: 'action', id: 'abc' }],
  ['GET', '/segments/abc/action', null],
  ['PUT', '/segments', null],
  ['POST', '/segments/abc', null],
  ['PATCH', '/segments/abc', null],
  ['HEAD', '/segments', null],
  ['GET', '/abcdef/segments', { resource: 'segments', action: 'index', projectId: 'abcdef' }],
  ['GET', '/ABC/segments', null],
  [
    'GET',
    '/abc-def/segments/x/hosts/y',
    { resource: 'hosts', action: 'show', projectId: 'abc-def', parentId: 'x', id: 'y' },
  ],
  ['GET', '/segments/x/hosts', { resource: 'hosts', action: 'index', parentId: 'x' }],
  ['GET', '/segments/x/hosts/new', { resource: 'hosts', action: 'new', parentId: 'x' }],
  ['PUT', '/segments/x/hosts/y.json', { resource: 'hosts', action: 'update', parentId: 'x', id: 'y', format: 'json' }],
  ['GET', '/versions', { resource: 'versions', action: 'index' }],
  ['GET', '/versions/v1.0', { resource: 'versions', action: 'show', id: 'v1.0' }],
  ['GET', '/v1.0/versions', null],
  ['GET', '/extensions', { resource: 'extensions', action: 'index' }],
  ['GET', '/extensions/segments', { resource: 'extensions', action: 'show', id: 'segments' }],
  ['GET', '/notifications/n/vmoves', { resource: 'vmoves', action: 'index', parentId: 'n' }],
  ['POST', '/notifications/n/vmoves', { resource: 'vmoves', action: 'create', parentId: 'n' }],
  ['GET', '/notifications/n/vmoves/v/edit', { resource: 'vmoves', action: 'edit', parentId: 'n', id: 'v' }],
  ['DELETE', '/notifications/n', { resource: 'notifications', action: 'delete', id: 'n' }],
  ['POST', '/notifications/n/action', { resource: 'notifications', action: 'action', id: 'n' }],
  ['POST', '/extensions/n/action', null],
  ['GET', '/os-hosts', null],
  ['GET', '/segments/abc\\', null],
];

test('paths and methods map to the same (resource, action) as Routes does for Masakari', () => {
  for (const [method, path, expected] of TABLE) {
    const m = matchV1(method, path);
    if (expected === null) {
      assert.is(m, undefined, `${method} ${path}`);
      continue;
    }
    assert.ok(m, `${method} ${path}`);
    const { template: _t, ...rest } = m!;
    assert.equal(rest, expected, `${method} ${path}`);
  }
});

test('route templates keep uuids out of metric labels', () => {
  assert.is(matchV1('GET', '/abc/segments/x/hosts/y')?.template, '/v1/{project_id}/segments/{segment_id}/hosts/{id}');
  assert.is(matchV1('POST', '/notifications/n/action')?.template, '/v1/notifications/{id}/action');
});

test.run();
