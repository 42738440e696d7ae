import { test } from 'uvu';
import * as assert from 'uvu/assert';
import pino from 'pino';
import type { KubeClient } from '../../k8s/client.ts';
import type { Notification, NotificationStatusBlock } from '../../model/types.ts';
import { RestoreGuard } from './restore-guard.ts';

const n = (
  name: string,
  uid: string,
  status?: NotificationStatusBlock,
  created = '2026-12-04T10:00:00Z',
): Notification => ({
  apiVersion: 'masakari.openkeel.io/v1alpha1',
  kind: 'Notification',
  metadata: { name, uid, namespace: 'ns', resourceVersion: '7', creationTimestamp: created },
  spec: {} as Notification['spec'],
  ...(status ? { status } : {}),
});

function harness(items: Notification[] = [], reapplyHostFlags?: () => Promise<string[]>) {
  const written: Notification[] = [];
  const events: string[] = [];
  let leading = true;
  const kube = {
    replaceStatus: async (_ref: unknown, _ns: unknown, _name: string, body: Notification) => {
      written.push(body);
      return body;
    },
    list: async () => ({ metadata: {}, items }),
    get: async (_ref: unknown, _ns: unknown, name: string) => {
      const found = items.find((i) => i.metadata.name === name);
      if (!found) throw new Error('not found');
      return found;
    },
  } as unknown as KubeClient;
  const guard = new RestoreGuard({
    kube,
    namespace: 'ns',
    log: pino({ level: 'silent' }),
    isLeading: () => leading,
    ...(reapplyHostFlags ? { reapplyHostFlags } : {}),
    events: {
      onNotification: (o, type, reason) => void events.push(`${type} ${reason} ${o.metadata.name}`),
      onHost: () => undefined,
    },
  });
  return { guard, written, events, setLeading: (v: boolean) => (leading = v) };
}

test('a notification this engine ended that comes back unfinished is held, its final status written back, an Event', async () => {
  const h = harness();
  h.guard.observe(n('a', 'u1', { phase: 'running', runs: 1 }));
  h.guard.observe(n('a', 'u1', { phase: 'finished', runs: 1 }), 'written');
  // the watch announces it leaving with its last unfinished copy
  h.guard.observe(n('a', 'u1', { phase: 'running', runs: 1 }), 'left');
  assert.not.ok(h.guard.holds('a'));
  h.guard.observe(n('a', 'u1', { phase: 'running', runs: 1 })); // the restore's copy
  assert.ok(h.guard.holds('a'));
  await h.guard.reinstate('a');
  assert.is(h.written[0]?.status?.phase, 'finished');
  assert.is(h.written[0]?.metadata.resourceVersion, '7', 'over the restored copy, with its resourceVersion');
  assert.not.ok(h.guard.holds('a'));
  assert.equal(h.events, ['Warning RolledBackByRestore a']);
});

test('the host flags go back before the status; when they fail the notification stays held and nothing is written', async () => {
  let fail = true;
  const h = harness([], async () => {
    if (fail) throw new Error('the API server is unavailable');
    return ['failed on maintenance'];
  });
  h.guard.observe(n('a', 'u1', { phase: 'finished', runs: 1 }), 'written');
  h.guard.observe(n('a', 'u1', { phase: 'running', runs: 1 }), 'left');
  h.guard.observe(n('a', 'u1', { phase: 'running', runs: 1 }));
  const err = await h.guard.reinstate('a').then(
    () => undefined,
    (e: Error) => e,
  );
  assert.match(err?.message ?? '', /unavailable/);
  assert.ok(h.guard.holds('a'));
  assert.equal(h.written, []);
  fail = false;
  await h.guard.reinstate('a');
  assert.is(h.written[0]?.status?.phase, 'finished');
  assert.not.ok(h.guard.holds('a'));
});

test('one another engine ended (seen only leaving) is ended failed, saying why, not run again', async () => {
  const h = harness();
  h.guard.observe(n('b', 'u2', { phase: 'running', runs: 1 }));
  h.guard.observe(n('b', 'u2', { phase: 'running', runs: 1 }), 'left');
  h.guard.observe(n('b', 'u2', { phase: 'new' }));
  assert.ok(h.guard.holds('b'));
  await h.guard.reinstate('b');
  assert.is(h.written[0]?.status?.phase, 'failed');
  assert.match(h.written[0]?.status?.message ?? '', /not run again/);
  assert.equal(h.events, ['Warning RolledBackByRestore b']);
});

test('past 2,000 ended notifications the oldest keep their final phase only: written over the restored journal', async () => {
  const h = harness();
  const journal = [{ name: 'EvacuateInstancesTask' }] as never;
  for (let i = 0; i <= 2_000; i++) {
    h.guard.observe(n(`n${i}`, `u${i}`, { phase: 'finished', runs: 1, recoveryWorkflowDetails: journal }), 'written');
    h.guard.observe(n(`n${i}`, `u${i}`, { phase: 'running', runs: 1 }), 'left');
  }
  h.guard.observe(n('n0', 'u0', { phase: 'running', runs: 1, vmoves: [] }));
  await h.guard.reinstate('n0');
  assert.is(h.written[0]?.status?.phase, 'finished');
  assert.equal(h.written[0]?.status?.vmoves, [], 'the restored journal');
  assert.is(h.written[0]?.status?.recoveryWorkflowDetails, undefined);
  h.guard.observe(n('n2000', 'u2000', { phase: 'running', runs: 1 }));
  await h.guard.reinstate('n2000');
  assert.equal(h.written[1]?.status?.recoveryWorkflowDetails, journal, 'a recent one in whole');
});

test('a standby that saw one leave reads how it ended, and writes that back after a restore', async () => {
  const ended = n('c', 'u9', { phase: 'ignored', runs: 1, message: 'host_status UNKNOWN' });
  const h = harness([ended]);
  h.guard.observe(n('c', 'u9', { phase: 'running', runs: 1 }));
  h.guard.observe(n('c', 'u9', { phase: 'running', runs: 1 }), 'left');
  await new Promise((r) => setTimeout(r, 10));
  h.guard.observe(n('c', 'u9', { phase: 'running', runs: 1 }));
  await h.guard.reinstate('c');
  assert.is(h.written[0]?.status?.phase, 'ignored');
  assert.is(h.written[0]?.status?.message, 'host_status UNKNOWN');
});

test('a re-created notification (new uid), a retry and a lagging copy within a run are not rollbacks', () => {
  const h = harness();
  h.guard.observe(n('a', 'u1', { phase: 'finished', runs: 1 }), 'left');
  h.guard.observe(n('a', 'u2'));
  assert.not.ok(h.guard.holds('a'));
  h.guard.observe(n('b', 'u3', { phase: 'running', runs: 1 }));
  h.guard.observe(n('b', 'u3', { phase: 'error', runs: 1 }));
  h.guard.observe(n('b', 'u3', { phase: 'running', runs: 2 }));
  h.guard.observe(n('b', 'u3', { phase: 'running', runs: 1 })); // resumed from its journal, as after a crash
  assert.not.ok(h.guard.holds('b'));
});

test('after a rewind the leader reports each remembered notification the API server no longer has, once', async () => {
  const kept = n('kept', 'k1', { phase: 'running', runs: 1 }, '2026-12-04T10:00:00Z');
  const h = harness([kept]);
  h.guard.observe(kept);
  h.guard.observe(n('lost', 'l1', { phase: 'finished', runs: 1 }, '2026-12-04T10:05:00Z'), 'left');
  // purged before the snapshot: older than every restored notification, absent, not lost
  h.guard.observe(n('purged', 'p1', { phase: 'finished', runs: 1 }, '2026-11-20T10:00:00Z'), 'left');
  assert.is(await h.guard.reportIfRewound(), 0, 'nothing before a rewind');
  h.guard.rewound();
  h.setLeading(false);
  assert.is(await h.guard.reportIfRewound(), 0, 'only the leader reports');
  h.setLeading(true);
  assert.is(await h.guard.reportIfRewound(), 1);
  assert.equal(h.events, ['Warning LostInRestore lost']);
  h.guard.rewound();
  assert.is(await h.guard.reportIfRewound(), 0, 'reported once');
});

test.run();
