// FOR UNIT TESTS ONLY: the conditions of an object the store admitted
// (Ready=True, reason Admitted), for tests that build custom resources by hand.
import type { Condition } from '../model/types.ts';

export const admittedConditions = (lastTransitionTime = '2026-01-01T00:00:00Z'): Condition[] => [
  { type: 'Ready', status: 'True', reason: 'Admitted', message: '', lastTransitionTime },
];
