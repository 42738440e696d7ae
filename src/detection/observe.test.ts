import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { NovaService } from '../openstack/types.ts';
import { downLimit, hostState, look } from './observe.ts';

const svc = (host: string, over: Partial<NovaService> = {}): NovaService => ({
  id: `id-${host}`,
  binary: 'nova-compute',
  host,
  status: 'enabled',
  state: 'up',
  disabled_reason: null,
  forced_down: false,
  ...over,
});
const hosts = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `h${i}`, graceSeconds: 60 }));

test('the down limit: max_down_percent of the watched hosts, never below one host', () => {
  assert.is(downLimit(1, 50), 1);
  assert.is(downLimit(2, 50), 1);
  assert.is(downLimit(3, 50), 1);
  assert.is(downLimit(4, 50), 2);
  assert.is(downLimit(10, 50), 5);
  assert.is(downLimit(10, 0), 1);
});

test('down: service state down, or a Node not Ready; a host Nova does not list is unknown, not down', () => {
  assert.equal(hostState('a', svc('a'), undefined), { state: 'up' });
  assert.equal(hostState('a', svc('a'), 'True'), { state: 'up' });
  assert.is(hostState('a', svc('a', { state: 'down' }), undefined).state, 'down');
  assert.is(hostState('a', svc('a'), 'False').state, 'down');
  assert.is(hostState('a', svc('a'), 'Unknown').state, 'down');
  assert.is(hostState('a', undefined, undefined).state, 'unknown');
});

test('a look: Nova unreadable and most hosts down are blind; at the limit it is not', () => {
  const none = () => undefined;
  assert.equal(look({ hosts: hosts(4), services: { error: 'timeout' }, nodeReadiness: none, maxDownPercent: 50 }), {
    healthy: false,
    reason: 'NovaUnreachable',
    message: "Nova's compute services cannot be read: timeout",
  });
  const services = (down: number) => hosts(4).map((h, i) => svc(h.name, { state: i < down ? 'down' : 'up' }));
  const two = look({ hosts: hosts(4), services: services(2), nodeReadiness: none, maxDownPercent: 50 });
  assert.ok(two.healthy && two.down === 2);
  const three = look({ hosts: hosts(4), services: services(3), nodeReadiness: none, maxDownPercent: 50 });
  assert.is(three.healthy, false);
  assert.ok(!three.healthy && three.reason === 'MostHostsDown');
  // 100: never blind for the count.
  assert.ok(look({ hosts: hosts(4), services: services(4), nodeReadiness: none, maxDownPercent: 100 }).healthy);
  // Other binaries and hosts Nova lists but nobody watches do not count.
  const extra = [
    ...services(0),
    svc('other', { state: 'down' }),
    svc('h0', { binary: 'nova-conductor', state: 'down' }),
  ];
  const l = look({ hosts: hosts(4), services: extra, nodeReadiness: none, maxDownPercent: 50 });
  assert.ok(l.healthy && l.down === 0);
});

test.run();
