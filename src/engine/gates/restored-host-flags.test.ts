import { test } from 'uvu';
import * as assert from 'uvu/assert';
import pino from 'pino';
import type { HaHost, Notification, NotificationStatusBlock } from '../../model/types.ts';
import { INDEX } from '../../model/indexes.ts';
import type { Informer } from '../../runtime/types.ts';
import { effectiveFlags } from '../../domain/host-flags.ts';
import type { Plan } from '../intake/decisions.ts';
import type { HostFlags } from '../workflows/context.ts';
import { reapplyRestoredHostFlags, reservedHostsTaken } from './restored-host-flags.ts';
import { reservedHostKey } from '../workflows/host-failure-tasks.ts';

const host = (name: string, uuid: string, spec: Partial<HaHost['spec']> = {}, status: HaHost['status'] = {}): HaHost =>
  ({
    apiVersion: 'masakari.openkeel.io/v1alpha1',
    kind: 'HaHost',
    metadata: { name, uid: `uid-${name}`, namespace: 'ns', generation: 1 },
    spec: { name, type: 'COMPUTE', controlAttributes: 'SSH', segmentRef: { name: 'seg' }, ...spec },
    status: { uuid, ...status },
  }) as HaHost;

const notification = (status: NotificationStatusBlock): Notification => ({
  apiVersion: 'masakari.openkeel.io/v1alpha1',
  kind: 'Notification',
  metadata: { name: 'n1', uid: 'u1', namespace: 'ns' },
  spec: { type: 'COMPUTE_HOST', hostname: 'failed', generatedTime: '2026-12-05T00:00:00Z', payload: {} },
  status: { uuid: 'nu1', sourceHostUuid: 'h-failed', failoverSegmentUuid: 's1', ...status },
});

function world(hosts: HaHost[], plan: Plan = { kind: 'workflow', workflow: 'host', maintenance: 'on-and-unreserve' }) {
  const byName = new Map(hosts.map((h) => [h.spec.name, h]));
  const informer = {
    byIndex: (index: string, key: string) =>
      hosts.filter((h) => (index === INDEX.uuid ? h.status?.uuid === key : h.spec.name === key)),
  } as unknown as Informer<HaHost>;
  const calls: string[] = [];
  const events: string[] = [];
  const latch = (name: string, f: { onMaintenance?: boolean; reserved?: boolean }) => {
    const h = byName.get(name)!;
    const cur = effectiveFlags(h);
    h.status = { ...h.status, ...cur, ...f, flagsGeneration: h.metadata.generation ?? 1 };
  };
  const flags = {
    setOnMaintenance: async (name: string, unreserve: boolean) => {
      calls.push(`maintenance ${name}${unreserve ? ' unreserve' : ''}`);
      latch(name, { onMaintenance: true, ...(unreserve ? { reserved: false } : {}) });
    },
    setReserved: async (name: string, reserved: boolean) => {
      calls.push(`reserved ${name} ${reserved}`);
      latch(name, { reserved });
    },
  } as unknown as HostFlags;
  const d = {
    hosts: informer,
    flags,
    log: pino({ level: 'silent' }),
    events: {
      onNotification: () => undefined,
      onHost: (h: HaHost, type: string, reason: string) => void events.push(`${type} ${reason} ${h.spec.name}`),
    },
    plan: () => plan,
  };
  return { d, calls, events };
}

test('a finished host recovery the restore rolled back puts its host on maintenance again, with an Event', async () => {
  const w = world([host('failed', 'h-failed', { reserved: true })]);
  const final = { phase: 'finished', runs: 1 } as const;
  const written = await reapplyRestoredHostFlags(w.d, notification({ phase: 'running', runs: 1 }), final, true);
  assert.equal(w.calls, ['maintenance failed unreserve']);
  assert.equal(written, ['failed on maintenance, not reserved']);
  assert.equal(w.events, ['Warning RolledBackByRestore failed']);
});

test('nothing is written when the snapshot already had the flags', async () => {
  const w = world([host('failed', 'h-failed', {}, { onMaintenance: true, reserved: false, flagsGeneration: 1 })]);
  const written = await reapplyRestoredHostFlags(
    w.d,
    notification({ phase: 'running', runs: 1 }),
    { phase: 'finished', runs: 1 },
    true,
  );
  assert.equal(written, []);
  assert.equal(w.calls, []);
});

test('a notification that ended without a run (the decision table ended it) sets no flag', async () => {
  const w = world([host('failed', 'h-failed')]);
  // ended without a run (ignored by the decision table, or failed for its age): no run set any flag
  const written = await reapplyRestoredHostFlags(w.d, notification({}), { phase: 'failed', runs: 0 }, true);
  assert.equal(written, []);
});

test('the reserved host a run took is un-reserved again', async () => {
  const w = world([
    host('failed', 'h-failed', {}, { onMaintenance: true, flagsGeneration: 1 }),
    host('spare', 'h-spare', { reserved: true }),
  ]);
  const final: NotificationStatusBlock = {
    phase: 'finished',
    runs: 1,
    engine: { effects: { [reservedHostKey('spare')]: { state: 'done', at: '2026-12-05T00:00:01Z', seq: 1 } } },
  };
  assert.equal(reservedHostsTaken(final), ['spare']);
  const written = await reapplyRestoredHostFlags(w.d, notification({ phase: 'running', runs: 1 }), final, true);
  assert.equal(w.calls, ['reserved spare false']);
  assert.equal(written, ['spare not reserved']);
});

test('an outcome the engine never learnt leaves the host on maintenance (the safe side)', async () => {
  const w = world([host('failed', 'h-failed')], { kind: 'workflow', workflow: 'process', maintenance: 'on' });
  const written = await reapplyRestoredHostFlags(w.d, notification({}), { phase: 'failed' }, false);
  assert.equal(w.calls, ['maintenance failed']);
  assert.equal(written, ['failed on maintenance']);
});

test('a plan without maintenance (an instance failure) writes no host flag', async () => {
  const w = world([host('failed', 'h-failed')], { kind: 'workflow', workflow: 'instance', maintenance: 'none' });
  assert.equal(await reapplyRestoredHostFlags(w.d, notification({}), { phase: 'finished', runs: 1 }, true), []);
});

test.run();
