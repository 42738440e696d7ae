import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { KubeError } from './client.ts';
import { query, resourcePath } from './paths.ts';
import { RESOURCES } from './resources.ts';

test('core resources live under /api, others under /apis/<group>', () => {
  assert.is(resourcePath(RESOURCES.configMaps, 'ns', 'x'), '/api/v1/namespaces/ns/configmaps/x');
  assert.is(resourcePath(RESOURCES.leases, 'ns', 'l'), '/apis/coordination.k8s.io/v1/namespaces/ns/leases/l');
  assert.is(resourcePath(RESOURCES.namespaces, 'ignored', 'ns'), '/api/v1/namespaces/ns');
});

test('subresources and escaping', () => {
  assert.is(
    resourcePath(RESOURCES.segments, 'ns', 'a b', 'status'),
    '/apis/masakari.openkeel.io/v1alpha1/namespaces/ns/failoversegments/a%20b/status',
  );
});

test('a namespaced collection without a namespace is all-namespaces only where allowed', () => {
  assert.is(resourcePath(RESOURCES.configMaps, undefined, undefined, undefined, true), '/api/v1/configmaps');
  assert.throws(
    () => resourcePath(RESOURCES.configMaps, undefined, 'x'),
    (e: unknown) => e instanceof KubeError && e.code === 400,
  );
  assert.throws(() => resourcePath(RESOURCES.configMaps, 'ns', ''), /a name is required/);
});

test('query strings skip undefined, empty and false values', () => {
  assert.is(query({ a: undefined, b: '', c: false, d: true, e: 0, f: 'x y' }), '?d=true&e=0&f=x+y');
  assert.is(query({}), '');
});

test.run();
