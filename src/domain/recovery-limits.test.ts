import { test as limits } from 'uvu';
import * as assert from 'uvu/assert';
import type { RecoveryLimits } from '../model/types.ts';
import { recoveryLimitsProblem } from './recovery-limits.ts';
import { validateFailoverSegmentSpec } from './validators.ts';

limits('spec.recoveryLimits: counts >= 0 and percentages 0%..100%, anything else refused with the field named', () => {
  for (const ok of [
    undefined,
    {},
    { maxUnhealthyHosts: 0 },
    { maxUnhealthyHosts: '0%' },
    { maxRecoveringHosts: '100%' },
  ])
    assert.is(recoveryLimitsProblem(ok as RecoveryLimits | undefined), undefined, JSON.stringify(ok));
  for (const [bad, field] of [
    [{ maxUnhealthyHosts: -1 }, 'maxUnhealthyHosts'],
    [{ maxUnhealthyHosts: 1.5 }, 'maxUnhealthyHosts'],
    [{ maxRecoveringHosts: '150%' }, 'maxRecoveringHosts'],
    [{ maxRecoveringHosts: 'two' }, 'maxRecoveringHosts'],
    [{ maxRecoveringHosts: '2' }, 'maxRecoveringHosts'],
  ] as const) {
    const problem = recoveryLimitsProblem(bad as unknown as RecoveryLimits);
    assert.ok(problem?.startsWith(`spec.recoveryLimits.${field} must be a count >= 0 or a percentage`), problem);
  }
});

limits('a FailoverSegment with a bad limit is refused with that message (webhook and reconciler)', () => {
  const spec = { name: 'seg', recoveryMethod: 'auto' as const, serviceType: 'COMPUTE' };
  assert.is(validateFailoverSegmentSpec({ ...spec, recoveryLimits: { maxUnhealthyHosts: '40%' } }), undefined);
  assert.ok(
    validateFailoverSegmentSpec({ ...spec, recoveryLimits: { maxUnhealthyHosts: -2 } })?.startsWith(
      'spec.recoveryLimits.maxUnhealthyHosts must be',
    ),
  );
});

limits.run();
