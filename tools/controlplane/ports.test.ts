// Free ports come from outside the kernel's ephemeral range, so an outgoing
// connection cannot take one between the pick and the bind.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ephemeralRange, freePort, pickRange } from './ports.ts';

test('free ports are outside the ephemeral range, bindable, and never handed out twice', async () => {
  const [lo, hi] = ephemeralRange();
  const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
  for (const p of ports) assert.ok(p < lo || p > hi, `${p} is in the ephemeral range ${lo}-${hi}`);
  assert.is(new Set(ports).size, ports.length);
});

test('the ephemeral range is read from the kernel, with the default when it cannot be read', () => {
  assert.equal(
    ephemeralRange(() => '1024\t65000\n'),
    [1024, 65000],
  );
  assert.equal(
    ephemeralRange(() => {
      throw new Error('ENOENT');
    }),
    [32768, 60999],
  );
  assert.equal(
    ephemeralRange(() => 'garbage'),
    [32768, 60999],
  );
});

test('ports are picked below the ephemeral and NodePort ranges, above it when there is no room below, else by the kernel', () => {
  assert.equal(pickRange([32768, 60999]), [20000, 29999]);
  assert.equal(pickRange([25000, 60999]), [20000, 24999]);
  assert.equal(pickRange([1024, 50000]), [50001, 65535]);
  assert.is(pickRange([1024, 65000]), undefined);
});

test.run();
