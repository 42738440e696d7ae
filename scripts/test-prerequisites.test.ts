// `make test` outside CI: which suites the runner leaves out, and when it says so.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { luaAction, suitesLeftOut } from './test-prerequisites.mjs';

const suites = (m: Parameters<typeof suitesLeftOut>[0]) => suitesLeftOut(m).map((l) => l.suite);

test('make test as a non-root user leaves out only the suites that need root, each with why', () => {
  const out = suitesLeftOut({ mode: 'all', root: false, skipRoot: false, rabbitmq: false });
  assert.equal(
    out.map((l) => l.suite),
    ['cluster', 'openstack'],
  );
  assert.match(out[0]!.reason, /needs root \(kubelet, containerd, iptables\); left out: not root/);
  assert.match(out[1]!.reason, /rabbitmq-server/);
  // with Debian's rabbitmq-server installed, the mini OpenStack runs as any user
  assert.equal(suites({ mode: 'all', root: false, skipRoot: false, rabbitmq: true }), ['cluster']);
});

test('as root everything runs, unless SKIP_ROOT=1 leaves the root suites out anyway', () => {
  assert.equal(suites({ mode: 'all', root: true, skipRoot: false, rabbitmq: false }), []);
  const skipped = suitesLeftOut({ mode: 'all', root: true, skipRoot: true, rabbitmq: true });
  assert.equal(
    skipped.map((l) => l.suite),
    ['cluster'],
  );
  assert.match(skipped[0]!.reason, /left out: SKIP_ROOT=1/);
});

test('a suite asked for by name is never left out: it runs, and fails if it must', () => {
  for (const mode of ['cluster', 'openstack', 'unit', 'integration']) {
    assert.equal(suites({ mode, root: false, skipRoot: true, rabbitmq: false }), [], mode);
  }
});

test('lua5.1: nothing to do when present, installed as root with apt-get, else named as missing', () => {
  assert.is(luaAction({ lua: true, root: false, apt: false }), 'ok');
  assert.is(luaAction({ lua: false, root: true, apt: true }), 'install');
  assert.is(luaAction({ lua: false, root: false, apt: true }), 'missing');
  assert.is(luaAction({ lua: false, root: true, apt: false }), 'missing');
});

test.run();
