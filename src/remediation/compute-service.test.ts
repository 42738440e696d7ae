import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { NovaBadRequest } from '../openstack/types.ts';
import { LeaseNotHeld, leaseFencedNova } from '../runtime/lease-fence.ts';
import { rejection } from '../testing/expect-error.ts';
import { FakeNova } from '../testing/fake-nova.ts';
import { forceDownComputeService } from './compute-service.ts';

const REMEDIATOR = { holder: 'the remediator', lease: 'masakari-remediation' };

function nova(held: () => boolean) {
  const fake = new FakeNova();
  fake.addHost('worker-1', { state: 'down' });
  return { fake, fenced: leaseFencedNova(fake, held, REMEDIATOR, { warn: () => undefined })! };
}

test('forced down once; a service already forced down is not written again', async () => {
  const n = nova(() => true);
  const first = await forceDownComputeService(n.fenced, 'worker-1');
  assert.equal(first, { ok: true, serviceId: n.fake.service('worker-1').id, already: false });
  assert.is(n.fake.service('worker-1').forced_down, true);
  assert.equal(await forceDownComputeService(n.fenced, 'worker-1'), { ...first, already: true });
  assert.is(n.fake.count('updateService'), 1);
});

test('Nova refusing is a failure with its words; no service is a failure of its own', async () => {
  const n = nova(() => true);
  n.fake.failNext('updateService', new NovaBadRequest(400, 'Invalid input'));
  const refused = await forceDownComputeService(n.fenced, 'worker-1');
  assert.is(refused.ok, false);
  assert.match(!refused.ok ? refused.message : '', 'HTTP 400');
  const missing = await forceDownComputeService(n.fenced, 'worker-9');
  assert.equal(!missing.ok && missing.message, 'Nova has no nova-compute service on host worker-9');
});

test('a deposed remediator (its Lease lapsed) sends no forced_down: the call rejects, the Lease holder does it', async () => {
  const n = nova(() => false);
  const err = await rejection(forceDownComputeService(n.fenced, 'worker-1'), LeaseNotHeld);
  assert.match(err.message, 'the remediator no longer holds the masakari-remediation Lease');
  assert.is(n.fake.count('updateService'), 0);
  assert.is(n.fake.service('worker-1').forced_down, false);
});

test.run();
