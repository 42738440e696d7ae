import { randomUUID } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { claimObjectName, notificationObjectName, restObjectName, sequenceObjectName, slugify } from './names.ts';

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

test('slugify keeps a readable lowercase DNS-safe form of free text', () => {
  assert.is(slugify('My Segment #1'), 'my-segment-1');
  assert.is(slugify('--a__b--'), 'a-b');
  assert.is(slugify('段'), '');
  assert.ok(slugify('x'.repeat(300)).length <= 40);
});

test('claim names differ for names that slugify alike, and are valid object names', () => {
  const a = claimObjectName('segment', 'A b');
  const b = claimObjectName('segment', 'a-b');
  assert.not.equal(a, b);
  assert.ok(a.startsWith('claim-segment-a-b-'));
  for (const n of [a, b, claimObjectName('host', '段'), claimObjectName('segment', ' '.repeat(255))]) {
    assert.ok(DNS_SUBDOMAIN.test(n), n);
    assert.ok(n.length <= 253);
  }
});

test('claim names are stable for the same exact name and kind-scoped', () => {
  assert.is(claimObjectName('host', 'compute-1'), claimObjectName('host', 'compute-1'));
  assert.not.equal(claimObjectName('host', 'x'), claimObjectName('segment', 'x'));
  assert.not.equal(claimObjectName('host', 'Compute-1'), claimObjectName('host', 'compute-1'));
});

test('REST object names are a slug plus 8 hex digits of the uuid, 16 for notifications', () => {
  const uuid = '3f2a9c1b-5d41-402a-8000-000000000000';
  assert.is(restObjectName('seg-a', uuid, 'segment'), 'seg-a-3f2a9c1b');
  assert.is(restObjectName('!!!', uuid, 'segment'), 'segment-3f2a9c1b');
  assert.is(notificationObjectName('compute-1', 'COMPUTE_HOST', uuid), 'compute-1-compute-host-3f2a9c1b5d41402a');
  assert.ok(DNS_SUBDOMAIN.test(restObjectName('x'.repeat(255), uuid, 'host')));
  assert.ok(DNS_SUBDOMAIN.test(notificationObjectName('x'.repeat(255), 'COMPUTE_HOST', uuid)));
});

test("a storm's notifications on one host never share an object name (a shared one was answered 409)", () => {
  const names = new Set<string>();
  for (let i = 0; i < 100_000; i++) names.add(notificationObjectName('compute-1', 'VM', randomUUID()));
  assert.is(names.size, 100_000);
});

test('sequence object names follow masakari-ids-<kind>', () => {
  assert.is(sequenceObjectName('vmoves'), 'masakari-ids-vmoves');
});

test.run();
