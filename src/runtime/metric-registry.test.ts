import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Registry } from 'prom-client';
import { counter, gauge, histogram, registerOnce } from './metric-registry.ts';

test('asking twice for a metric of one registry gives the same metric, not a duplicate-name error', () => {
  const registry = new Registry();
  assert.is(counter(registry, 'x_total', 'x', ['k']), counter(registry, 'x_total', 'x', ['k']));
  assert.is(gauge(registry, 'g', 'g'), gauge(registry, 'g', 'g'));
  assert.is(histogram(registry, 'h_seconds', 'h', [], [1]), histogram(registry, 'h_seconds', 'h', [], [1]));
  assert.is(registry.getMetricsAsArray().length, 3);
});

test('a metric made without a registry is shared by every registry it is attached to, once each', async () => {
  const shared = counter(undefined, 'shared_total', 'shared');
  const a = new Registry();
  const b = new Registry();
  registerOnce(a, [shared]);
  registerOnce(a, [shared]);
  registerOnce(b, [shared]);
  shared.inc(2);
  assert.match(await a.metrics(), 'shared_total 2');
  assert.match(await b.metrics(), 'shared_total 2');
});

test.run();
