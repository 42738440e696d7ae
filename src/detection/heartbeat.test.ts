import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { novaService } from '../testing/fake-nova.ts';
import type { NovaService } from '../openstack/types.ts';
import { Heartbeats } from './heartbeat.ts';

/** The service of host h as a recovery left it: disabled, forced down (so it reads down). */
const svc = (updated_at: string | null, over: Partial<NovaService> = {}): NovaService =>
  novaService('h', { status: 'disabled', state: 'down', forced_down: true, updated_at, ...over });

test('forced down: reporting at a look where updated_at moved, once it has moved at two looks of the recovery', () => {
  const hb = new Heartbeats();
  assert.is(hb.reporting('h', 'r1', svc('T1')), false, 'a first look has nothing to compare with');
  assert.is(hb.reporting('h', 'r1', svc('T1')), false, 'dead: nothing moves');
  assert.is(hb.reporting('h', 'r1', svc('T2')), false, 'one move may be a person editing the service');
  assert.is(hb.reporting('h', 'r1', svc('T2')), false, 'no report between these two looks');
  assert.is(hb.reporting('h', 'r1', svc('T3')), true, 'a second move: nova-compute reports');
  assert.is(hb.reporting('h', 'r1', svc('T3')), false, 'and a host that stops reporting again stops counting');
  assert.is(hb.reporting('h', 'r2', svc('T4')), false, 'another recovery starts over');
  assert.is(hb.reporting('h', 'r2', svc('T5')), false);
});

test("a person's `service set` is one move, and `state: up` after it is not a report", () => {
  const hb = new Heartbeats();
  hb.reporting('h', 'r1', svc('T1'));
  // `openstack compute service set --enable --up h nova-compute`: the row written once, Nova shows it up
  assert.is(hb.reporting('h', 'r1', svc('T2', { state: 'up', forced_down: false, status: 'enabled' })), false);
  assert.is(hb.reporting('h', 'r1', svc('T2', { state: 'up', forced_down: false, status: 'enabled' })), false);
});

test('forget and retain drop what was seen', () => {
  const hb = new Heartbeats();
  hb.reporting('h', 'r1', svc('T1'));
  hb.reporting('h', 'r1', svc('T2'));
  hb.retain(new Set());
  assert.is(hb.reporting('h', 'r1', svc('T3')), false, 'forgotten: a first look again');
  hb.forget('h');
  assert.is(hb.reporting('h', 'r1', svc('T4')), false);
});

test.run();
