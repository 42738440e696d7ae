import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Registry } from 'prom-client';
import { NovaError } from '../../openstack/types.ts';
import { countEvacuation, countFinalStatus, instrumentNova, registerEngineMetrics } from './metrics.ts';
import { FakeNova, makeServer } from '../../testing/fake-nova.ts';

test('engine metrics attach to several registries and count', async () => {
  const a = new Registry();
  const b = new Registry();
  registerEngineMetrics(a);
  registerEngineMetrics(a);
  registerEngineMetrics(b);
  countFinalStatus('VM', 'finished', 12);
  countEvacuation('succeeded');
  const text = await a.metrics();
  assert.match(text, 'masakari_notifications_total{type="VM",status="finished"}');
  assert.match(text, 'masakari_recovery_duration_seconds_bucket{le="15",type="VM"}');
  assert.match(text, 'masakari_evacuations_total{result="succeeded"}');
  assert.match(await b.metrics(), 'masakari_evacuations_total');
});

test('instrumented Nova records duration by method and status, and errors by kind', async () => {
  const r = new Registry();
  registerEngineMetrics(r);
  const fake = new FakeNova();
  fake.addServer(makeServer('s1'));
  const nova = instrumentNova(fake);
  await nova.getServer('s1');
  fake.failNext('evacuate', new NovaError(503, 'down'));
  await nova.evacuate('s1', undefined).catch(() => undefined);
  const text = await r.metrics();
  assert.match(text, 'masakari_nova_call_duration_seconds_count{method="getServer",status="200"}');
  assert.match(text, 'masakari_nova_call_duration_seconds_count{method="evacuate",status="503"}');
  assert.match(text, 'masakari_nova_call_errors_total{method="evacuate",kind="server"}');
  assert.is(fake.count('getServer'), 1);
});

test('instrumented Nova passes the Glance image read through and times it', async () => {
  const r = new Registry();
  registerEngineMetrics(r);
  const fake = new FakeNova();
  fake.images.set('img-1', { id: 'img-1', evacuable: 'true' });
  const nova = instrumentNova(fake);
  assert.equal(await nova.getImage('img-1'), { id: 'img-1', evacuable: 'true' });
  assert.match(await r.metrics(), 'masakari_nova_call_duration_seconds_count{method="getImage",status="200"}');
});

test.run();
