import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { RESOURCES } from '../../k8s/resources.ts';
import type { HaHost } from '../../model/types.ts';
import { HaHostFlags, HostNotFoundError } from './ha-host-flags.ts';
import { host, NS, quietLog, world } from '../testing/fixtures.ts';
import { effectiveFlags } from '../../domain/host-flags.ts';

async function setup() {
  const w = await world();
  const flags = new HaHostFlags({ kube: w.kube, namespace: NS, hosts: w.hosts, clock: w.clock, log: quietLog });
  return { w, flags, peek: (name: string) => w.kube.peek<HaHost>(RESOURCES.hosts, `host-${name}`) };
}

test('status flags count only while flagsGeneration equals metadata.generation', () => {
  const h = host('a', 'u', 's', { reserved: true });
  assert.equal(effectiveFlags(h), { reserved: true, onMaintenance: false });
  h.metadata.generation = 2;
  h.status = { ...h.status, reserved: false, onMaintenance: true, flagsGeneration: 2 };
  assert.equal(effectiveFlags(h), { reserved: false, onMaintenance: true });
  h.metadata.generation = 3;
  assert.equal(effectiveFlags(h), { reserved: true, onMaintenance: false });
});

test('setOnMaintenance latches both flags in status with the generation; spec untouched', async () => {
  const { w, flags, peek } = await setup();
  w.kube.seed(RESOURCES.hosts, host('a', 'u-a', 's', { reserved: true }));
  await flags.setOnMaintenance('a', true);
  const h = peek('a');
  assert.equal(
    [h.status?.onMaintenance, h.status?.reserved, h.status?.flagsGeneration, h.status?.updatedAt],
    [true, false, 1, '2026-01-02T03:04:05Z'],
  );
  assert.equal([h.spec.onMaintenance, h.spec.reserved], [false, true]);
  assert.equal(effectiveFlags(w.hosts.get('host-a')!), { reserved: false, onMaintenance: true });
});

test('setOnMaintenance without unreserve (process failure) keeps the effective reserved flag', async () => {
  const { w, flags, peek } = await setup();
  w.kube.seed(RESOURCES.hosts, host('a', 'u-a', 's', { reserved: true }));
  await flags.setOnMaintenance('a', false);
  const h = peek('a');
  assert.equal([h.status?.onMaintenance, h.status?.reserved, h.status?.flagsGeneration], [true, true, 1]);
});

test('setReserved keeps the effective maintenance flag; a concurrent write is retried', async () => {
  const { w, flags, peek } = await setup();
  w.kube.seed(RESOURCES.hosts, host('a', 'u-a', 's', { reserved: true, onMaintenance: true }));
  const stale = w.hosts.get('host-a')!;
  w.kube.mutate(RESOURCES.hosts, 'host-a', (h: HaHost) => (h.status!.id = 7));
  w.hosts.upsertLocal(stale);
  await flags.setReserved('a', false);
  const h = peek('a');
  assert.equal([h.status?.reserved, h.status?.onMaintenance, h.status?.id], [false, true, 7]);
  assert.instance(await flags.setReserved('nope', true).catch((e) => e), HostNotFoundError);
});

test('reservedHosts: same segment, reserved and not on maintenance (effective), newest first', async () => {
  const { w, flags } = await setup();
  const mk = (name: string, seg: string, spec: Partial<HaHost['spec']>, id: number, created: string) => {
    const h = host(name, `u-${name}`, seg, spec, id);
    h.metadata.creationTimestamp = created;
    w.kube.seed(RESOURCES.hosts, h);
  };
  mk('old', 's1', { reserved: true }, 1, '2026-01-01T00:00:00Z');
  mk('new', 's1', { reserved: true }, 2, '2026-01-01T00:00:05Z');
  mk('tie-low', 's1', { reserved: true }, 3, '2026-01-01T00:00:03Z');
  mk('tie-high', 's1', { reserved: true }, 4, '2026-01-01T00:00:03Z');
  mk('maint', 's1', { reserved: true, onMaintenance: true }, 5, '2026-01-01T00:00:09Z');
  mk('plain', 's1', {}, 6, '2026-01-01T00:00:09Z');
  mk('other', 's2', { reserved: true }, 7, '2026-01-01T00:00:09Z');
  assert.equal(flags.reservedHosts('s1'), ['new', 'tie-high', 'tie-low', 'old']);
});

test.run();
