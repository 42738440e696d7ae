import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Registry } from 'prom-client';
import { counter, gauge, histogram, registerOnce } from './metric-registry.ts';

test('asking twice for a metric of one registry gives the same metric, not a duplicate-name error', () => {
  const registry = new Registry();
  const spec = { name: 'x_total', help: 'x', labelNames: ['k'] as const };
  assert.is(counter(registry, spec), counter(registry, spec));
  assert.is(gauge(registry, { name: 'g', help: 'g' }), gauge(registry, { name: 'g', help: 'g' }));
  const h = { name: 'h_seconds', help: 'h', buckets: [1] };
  assert.is(histogram(registry, h), histogram(registry, h));
  assert.is(registry.getMetricsAsArray().length, 3);
});

test('a metric made without a registry is shared by every registry it is attached to, once each', async () => {
  const shared = counter(undefined, { name: 'shared_total', help: 'shared' });
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
