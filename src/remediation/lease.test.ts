import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { LeaseLike } from '../model/remediation-types.ts';
import { KubeError } from '../k8s/client.ts';
import { scriptedKube } from '../testing/fake-kube.ts';
import { leaseBlocker, NodeLeaseUnreadable, readNodeLease } from './lease.ts';

const NOW = Date.parse('2026-11-29T12:00:00Z');
const lease = (holderIdentity: string | null, renewTime?: string, leaseDurationSeconds = 3600): LeaseLike => ({
  metadata: { name: 'node-worker-1', namespace: 'medik8s-leases' },
  spec: { holderIdentity, renewTime, leaseDurationSeconds },
});

test('no lease, or one without a holder, lets the remediator act', () => {
  assert.is(leaseBlocker(undefined, NOW), undefined);
  assert.is(leaseBlocker(lease(null), NOW), undefined);
  assert.is(leaseBlocker(lease(''), NOW), undefined);
});

test('the NodeHealthCheck that created the remediation does not block it', () => {
  assert.is(leaseBlocker(lease('NodeHealthCheck-workers', '2026-11-29T11:59:00Z'), NOW), undefined);
});

test('nor does a MachineHealthCheck, which NHC runs for Machine API clusters with the same templates', () => {
  assert.is(leaseBlocker(lease('MachineHealthCheck-workers', '2026-11-29T11:59:00Z'), NOW), undefined);
});

test('a live lease of Node Maintenance blocks the remediation, up to and including its due time', () => {
  assert.equal(leaseBlocker(lease('node-maintenance', '2026-11-29T11:30:00Z'), NOW), 'node-maintenance');
  assert.equal(leaseBlocker(lease('node-maintenance', '2026-11-29T11:00:00Z', 3600), NOW), 'node-maintenance');
});

test('an expired lease of another holder no longer blocks', () => {
  assert.is(leaseBlocker(lease('node-maintenance', '2026-11-29T10:00:00Z', 3600), NOW), undefined);
});

test('medik8s validity: no renewTime, no duration or a renewTime in the future is no hold (NHC takes such a lease over)', () => {
  assert.is(leaseBlocker(lease('node-maintenance'), NOW), undefined);
  assert.is(
    leaseBlocker(
      {
        metadata: { name: 'node-worker-1' },
        spec: { holderIdentity: 'node-maintenance', renewTime: '2026-11-29T11:59:00Z' },
      },
      NOW,
    ),
    undefined,
  );
  assert.is(leaseBlocker(lease('node-maintenance', '2026-11-29T12:05:00Z'), NOW), undefined);
});

test('the node lease is read from the configured lease namespace (NHC LEASE_NAMESPACE)', async () => {
  const asked: Array<[string | undefined, string]> = [];
  const kube = scriptedKube({
    get: async (_ref, ns, name) => {
      asked.push([ns, name]);
      return lease('node-maintenance');
    },
  });
  const got = await readNodeLease(kube, 'custom-leases', 'worker-1');
  assert.is(got?.spec?.holderIdentity, 'node-maintenance');
  assert.equal(asked, [['custom-leases', 'node-worker-1']]);
});

test('a missing lease (or lease namespace) reads as no lease', async () => {
  const kube = scriptedKube({
    get: async () => {
      throw new KubeError(404, 'NotFound', 'leases "node-worker-1" not found');
    },
  });
  assert.is(await readNodeLease(kube, 'medik8s-leases', 'worker-1'), undefined);
});

test('a lease the remediator may not read (no lease Role: a chart installed before NHC) is a named hold, not a crash', async () => {
  const kube = scriptedKube({
    get: async () => {
      throw new KubeError(403, 'Forbidden', 'leases.coordination.k8s.io "node-worker-1" is forbidden');
    },
  });
  const err = await readNodeLease(kube, 'medik8s-leases', 'worker-1').then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.instance(err, NodeLeaseUnreadable);
  assert.match((err as Error).message, /cannot read the medik8s node lease medik8s-leases\/node-worker-1/);
  assert.match((err as Error).message, /remediation\.readMedik8sLeases/);
});

test.run();
