import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { admittedStatus, host } from './testing/ha-host.ts';
import { effectiveFlags } from './host-flags.ts';

test('engine-latched flags win while flagsGeneration equals generation', () => {
  const h = host({ onMaintenance: false }, { ...admittedStatus, onMaintenance: true, flagsGeneration: 3 }, 3);
  assert.equal(effectiveFlags(h), { reserved: false, onMaintenance: true });
});

test('a newer spec generation overrides the latched flags', () => {
  const h = host(
    { onMaintenance: false, reserved: true },
    { ...admittedStatus, onMaintenance: true, reserved: false, flagsGeneration: 3 },
    4,
  );
  assert.equal(effectiveFlags(h), { reserved: true, onMaintenance: false });
});

test('spec values apply when status never latched anything', () => {
  assert.equal(effectiveFlags(host({ reserved: true }, admittedStatus)), { reserved: true, onMaintenance: false });
});

test.run();
