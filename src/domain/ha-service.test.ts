// Masakari's rules (masakari/ha/api.py) over the in-memory repository.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { rejection } from '../testing/expect-error.ts';
import { HaService } from './ha-service.ts';
import { MemoryRepository } from './testing/memory-repository.ts';
import type { ComputeHostChecker } from './compute-host-checker.ts';
import { MasakariError } from './errors.ts';

class Hosts implements ComputeHostChecker {
  constructor(readonly names: Set<string>) {}
  async exists(name: string) {
    return this.names.has(name);
  }
}

const q = (s = '') => new URLSearchParams(s);

function setup(window = 180) {
  const repo = new MemoryRepository();
  const svc = new HaService(repo, new Hosts(new Set(['compute-1', 'compute-2'])), {
    osapi_max_limit: 1000,
    duplicate_notification_detection_interval: window,
  });
  return { repo, svc };
}

async function rejects(p: Promise<unknown> | (() => unknown), status: number, message: string) {
  const e = await rejection((async () => (typeof p === 'function' ? p() : p))(), MasakariError);
  assert.is(e.status, status);
  assert.is(e.message, message);
}

const seg = (name: string, extra: Record<string, unknown> = {}) => ({
  segment: { name, recovery_method: 'auto', service_type: 'COMPUTE', ...extra },
});
const host = (name: string, extra: Record<string, unknown> = {}) => ({
  host: { name, type: 'COMPUTE', control_attributes: 'SSH', ...extra },
});
const notif = (hostname: string, generated_time: string, payload: Record<string, string> = { event: 'STOPPED' }) => ({
  notification: { type: 'COMPUTE_HOST', hostname, generated_time, payload },
});

const refusedAsDuplicate = (svc: HaService, hostname: string, generatedTime: string) =>
  rejects(
    svc.createNotification(notif(hostname, generatedTime)),
    409,
    `Notification received from host ${hostname} of type COMPUTE_HOST is duplicate.`,
  );

const segments = suite('segments');

segments('names are unique; enabled defaults to true and takes body booleans', async () => {
  const { svc } = setup();
  const a = await svc.createSegment(seg('a'));
  assert.is(a.enabled, true);
  const b = await svc.createSegment(seg('b', { enabled: 'Off' }));
  assert.is(b.enabled, false);
  await rejects(svc.createSegment(seg('a')), 409, 'Failover segment with name a already exists.');
  await rejects(
    svc.updateSegment(b.uuid, { segment: { name: 'a' } }),
    409,
    'Failover segment with name a already exists.',
  );
  assert.is((await svc.updateSegment(b.uuid, { segment: { enabled: 'yes' } })).enabled, true);
});

segments('show needs a uuid-like id; update and delete look the id up as given', async () => {
  const { svc } = setup();
  await rejects(() => svc.getSegment('abc'), 404, 'No failover segment with id abc.');
  await rejects(svc.updateSegment('abc', { segment: { name: 'x' } }), 404, 'No failover segment with id abc.');
  await rejects(svc.deleteSegment('abc'), 404, 'No failover segment with id abc.');
});

segments('a segment is in use while a notification of one of its hosts is new, running or error', async () => {
  const { repo, svc } = setup();
  const s = await svc.createSegment(seg('a'));
  const h = await svc.createHost(s.uuid, host('compute-1'));
  const n = await svc.createNotification(notif('compute-1', '2026-01-01T00:00:00'));
  for (const status of ['new', 'running', 'error'] as const) {
    repo.setNotificationState(n.notification_uuid, { status });
    await rejects(
      svc.updateSegment(s.uuid, { segment: { name: 'b' } }),
      409,
      `Failover segment ${s.uuid} can't be updated as it is in-use to process notifications.`,
    );
    await rejects(
      svc.deleteSegment(s.uuid),
      409,
      `Failover segment (${s.uuid}) can't be deleted as it is in-use to process notifications.`,
    );
    await rejects(
      svc.updateHost(s.uuid, h.uuid, { host: { type: 'x' } }),
      409,
      `Host ${h.uuid} can't be updated as it is in-use to process notifications.`,
    );
    await rejects(
      svc.deleteHost(s.uuid, h.uuid),
      409,
      `Host ${h.uuid} can't be deleted as it is in-use to process notifications.`,
    );
  }
  for (const status of ['finished', 'failed', 'ignored'] as const) {
    repo.setNotificationState(n.notification_uuid, { status });
    assert.is(svc.isUnderRecovery(s.uuid), false, status);
  }
  await svc.deleteSegment(s.uuid);
  assert.is(repo.getHost(h.uuid), undefined, 'hosts go with their segment');
});

segments('filters, sorting and markers follow Masakari', async () => {
  const { svc } = setup();
  await svc.createSegment(seg('c', { enabled: false }));
  await svc.createSegment(seg('a', { recovery_method: 'reserved_host' }));
  await svc.createSegment(seg('b'));
  const names = (s: string) => svc.listSegments(q(s)).map((x) => x.name);
  assert.equal(names(''), ['b', 'a', 'c'], 'created_at desc, id desc');
  assert.equal(names('sort_key=name&sort_dir=asc'), ['a', 'b', 'c']);
  assert.equal(names('sort_key=name&sort_dir=asc&marker=2'), ['b', 'c']);
  assert.equal(names('sort_key=id&sort_dir=asc&limit=2'), ['c', 'a']);
  assert.equal(names('recovery_method=reserved_host'), ['a']);
  assert.equal(names('enabled=false'), ['c']);
  assert.equal(names('limit=0&sort_key=nonsense'), []);
  await rejects(() => names('sort_key=nonsense'), 400, "InvalidSortKey('Sort key supplied is invalid: nonsense')");
  await rejects(
    () => names('sort_dir=sideways'),
    400,
    "Invalid input received: Unknown sort direction, must be 'asc' or 'desc'",
  );
  await rejects(
    () => names('sort_dir=asc&sort_dir=desc'),
    400,
    'Invalid input received: Sort direction size exceeds sort key size',
  );
  await rejects(() => names('marker=9'), 400, 'Marker 9 could not be found.');
  await rejects(() => names('limit=-1'), 400, 'Invalid input received: limit must be >= 0');
  await rejects(() => names('limit=x'), 400, 'Invalid input received: limit must be an integer');
  await rejects(
    () => names('enabled=perhaps'),
    400,
    "Invalid value for enabled: Unrecognized value 'perhaps', acceptable values are: '0', '1', 'f', 'false', 'n', 'no', 'off', 'on', 't', 'true', 'y', 'yes'",
  );
});

segments.run();

const hosts = suite('hosts');

hosts('a host name must be a Nova compute host, on create and on rename', async () => {
  const { svc } = setup();
  const s = await svc.createSegment(seg('a'));
  await rejects(svc.createHost(s.uuid, host('ghost')), 400, 'Compute service with name ghost could not be found.');
  const h = await svc.createHost(s.uuid, host('compute-1', { reserved: 'True', on_maintenance: 'no' }));
  assert.is(h.reserved, true);
  assert.is(h.on_maintenance, false);
  await rejects(
    svc.updateHost(s.uuid, h.uuid, { host: { name: 'ghost' } }),
    400,
    'Compute service with name ghost could not be found.',
  );
  await rejects(
    svc.createHost('6f1b4b6e-0000-4000-8000-000000000000', host('compute-2')),
    404,
    'No failover segment with id 6f1b4b6e-0000-4000-8000-000000000000.',
  );
});

hosts('a host name is unique across segments', async () => {
  const { svc } = setup();
  const a = await svc.createSegment(seg('a'));
  const b = await svc.createSegment(seg('b'));
  await svc.createHost(a.uuid, host('compute-1'));
  await rejects(svc.createHost(b.uuid, host('compute-1')), 409, 'Host with name compute-1 already exists.');
});

hosts('a host is found only under its own segment', async () => {
  const { svc } = setup();
  const a = await svc.createSegment(seg('a'));
  const b = await svc.createSegment(seg('b'));
  const h = await svc.createHost(a.uuid, host('compute-1'));
  await rejects(
    () => svc.getHost(b.uuid, h.uuid),
    404,
    `Host '${h.uuid}' under failover_segment '${b.uuid}' could not be found.`,
  );
  await rejects(() => svc.getHost(a.uuid, 'nope'), 404, 'No host with id nope.');
  await rejects(
    svc.deleteHost(a.uuid, 'nope'),
    404,
    `Host 'nope' under failover_segment '${a.uuid}' could not be found.`,
  );
});

hosts('query booleans are strict: t/f/y/n work, TRUE-style words fold, others fail', async () => {
  const { svc } = setup();
  const s = await svc.createSegment(seg('a'));
  await svc.createHost(s.uuid, host('compute-1', { on_maintenance: true }));
  await svc.createHost(s.uuid, host('compute-2'));
  const names = (x: string) => svc.listHosts(s.uuid, q(x)).map((h) => h.name);
  assert.equal(names('on_maintenance=t'), ['compute-1']);
  assert.equal(names('on_maintenance=NO'), ['compute-2']);
  assert.equal(names('name=compute-2'), ['compute-2']);
  await rejects(
    () => names('reserved=perhaps'),
    400,
    "Invalid value for reserved: Unrecognized value 'perhaps', acceptable values are: '0', '1', 'f', 'false', 'n', 'no', 'off', 'on', 't', 'true', 'y', 'yes'",
  );
  await rejects(() => svc.listHosts('nope', q('reserved=perhaps')), 404, 'No failover segment with id nope.');
});

hosts.run();

const notifications = suite('notifications');

notifications('intake order: unknown host 400, host on maintenance 409, duplicate 409', async () => {
  const { svc } = setup();
  const s = await svc.createSegment(seg('a'));
  await svc.createHost(s.uuid, host('compute-1', { on_maintenance: true }));
  await svc.createHost(s.uuid, host('compute-2'));
  await rejects(
    svc.createNotification(notif('ghost', '2026-01-01T00:00:00')),
    400,
    'Host with name ghost could not be found.',
  );
  await rejects(
    svc.createNotification(notif('compute-1', '2026-01-01T00:00:00')),
    409,
    "Notification received from host compute-1 of type 'COMPUTE_HOST' is ignored as the host is already under maintenance.",
  );
  const n = await svc.createNotification(notif('compute-2', '2026-01-01T00:00:00'));
  assert.is(n.status, 'new');
  assert.is(n.failover_segment_uuid, s.uuid);
  await refusedAsDuplicate(svc, 'compute-2', '2026-01-01T00:00:00');
});

notifications('the duplicate window is counted on generated_time, any status, same payload only', async () => {
  const { repo, svc } = setup(180);
  const s = await svc.createSegment(seg('a'));
  await svc.createHost(s.uuid, host('compute-1'));
  const first = await svc.createNotification(notif('compute-1', '2026-01-01T00:03:00Z'));
  repo.setNotificationState(first.notification_uuid, { status: 'finished' });
  // Earlier generated_time than an existing one: always inside the window.
  await refusedAsDuplicate(svc, 'compute-1', '2026-01-01T00:00:00');
  // 180 s after: still inside (>=); 181 s after: a new notification.
  await refusedAsDuplicate(svc, 'compute-1', '2026-01-01T00:06:00');
  await svc.createNotification(notif('compute-1', '2026-01-01T00:06:01'));
  // A different payload is never a duplicate.
  await svc.createNotification(notif('compute-1', '2026-01-01T00:03:00', { event: 'STARTED' }));
});

notifications('generated_time is stored in UTC without zone', async () => {
  const { svc } = setup();
  const s = await svc.createSegment(seg('a'));
  await svc.createHost(s.uuid, host('compute-1'));
  const n = await svc.createNotification(notif('compute-1', '2026-01-01T02:00:00.250000+02:00'));
  assert.is(n.generated_time, '2026-01-01T00:00:00.250000');
  assert.equal(
    svc.listNotifications(q('generated-since=2026-01-01T00:00:01')).map((x) => x.id),
    [],
  );
  assert.equal(
    svc.listNotifications(q('generated-since=2026-01-01')).map((x) => x.id),
    [n.id],
  );
  await rejects(() => svc.listNotifications(q('generated-since=yesterday')), 400, 'Invalid generated-since value');
});

notifications('vmoves exist only for COMPUTE_HOST notifications', async () => {
  const { svc } = setup();
  const s = await svc.createSegment(seg('a'));
  await svc.createHost(s.uuid, host('compute-1'));
  const n = await svc.createNotification({
    notification: {
      type: 'PROCESS',
      hostname: 'compute-1',
      generated_time: '2026-01-01T00:00:00',
      payload: { event: 'STOPPED', process_name: 'nova-compute' },
    },
  });
  await rejects(
    () => svc.listVMoves(n.notification_uuid, q()),
    400,
    `This notification ${n.notification_uuid} without vm moves.`,
  );
  await rejects(() => svc.listVMoves('nope', q()), 404, 'No notification with id nope.');
});

notifications.run();
