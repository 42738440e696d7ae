import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { novaService } from '../testing/fake-nova.ts';
import type { NovaService } from '../openstack/types.ts';
import { Heartbeats } from './heartbeat.ts';

/** The service of host h as a recovery left it: disabled, forced down (so it reads down). */
const svc = (updated_at: string | null, over: Partial<NovaService> = {}): NovaService =>
  novaService('h', { status: 'disabled', state: 'down', forced_down: true, updated_at, ...over });

test('forced down: reporting only when updated_at moved since the previous look of the same recovery', () => {
  const hb = new Heartbeats();
  assert.is(hb.reporting('h', 'r1', svc('T1')), false, 'a first look has nothing to compare with');
  assert.is(hb.reporting('h', 'r1', svc('T1')), false, 'dead: nothing moves');
  assert.is(hb.reporting('h', 'r1', svc('T2')), true, 'a report moved it');
  assert.is(hb.reporting('h', 'r1', svc('T2')), false, 'and a host that stops reporting again stops counting');
  assert.is(hb.reporting('h', 'r2', svc('T3')), false, 'another recovery starts over');
});

test('state up is reporting at once; forget and retain drop what was seen', () => {
  const hb = new Heartbeats();
  assert.is(hb.reporting('h', 'r1', svc('T1', { state: 'up', forced_down: false })), true);
  hb.reporting('h', 'r1', svc('T1'));
  hb.retain(new Set());
  assert.is(hb.reporting('h', 'r1', svc('T2')), false, 'forgotten: a first look again');
});

test.run();
