import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { RESOURCES } from '../../src/k8s/resources.ts';
import { MAX_TXN_BYTES, MAX_TXN_OPS, storageKey, txnBatches } from './etcd.ts';

test('storageKey is the API server default prefix: core kinds without a group, others with it', () => {
  assert.is(storageKey(RESOURCES.configMaps, 'ns', 'a'), '/registry/configmaps/ns/a');
  assert.is(storageKey(RESOURCES.notifications, 'ns', 'n-1'), '/registry/masakari.openkeel.io/notifications/ns/n-1');
  assert.is(storageKey(RESOURCES.namespaces, '', 'ns'), '/registry/namespaces/ns');
});

test('txnBatches keeps every transaction within etcd default op count and request size', () => {
  const small = Array.from({ length: 300 }, (_, i) => ({ key: `k${i}`, value: 'v' }));
  assert.equal(
    txnBatches(small).map((b) => b.length),
    [MAX_TXN_OPS, MAX_TXN_OPS, 300 - 2 * MAX_TXN_OPS],
  );
  const big = Array.from({ length: 10 }, (_, i) => ({ key: `k${i}`, value: 'x'.repeat(300 * 1024) }));
  const batches = txnBatches(big);
  assert.equal(
    batches.map((b) => b.length),
    [3, 3, 3, 1],
  );
  for (const b of batches) assert.ok(b.reduce((n, p) => n + p.key.length + p.value.length, 0) <= MAX_TXN_BYTES);
});

test.run();
