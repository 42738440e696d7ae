// The Ready condition as the store and its reconcilers write it, on the
// runtime's metav1.Condition helpers (lastTransitionTime changes only when
// the status flips).
import { CONDITIONS } from '../model/constants.ts';
import type { Condition } from '../model/types.ts';
import { getCondition, setCondition } from '../runtime/conditions.ts';

/** Ready=True for an admitted object, the same whichever path (REST or reconciler) admitted it. */
export const ADMITTED = { reason: 'Admitted', message: 'Visible through the Masakari API.' } as const;

export function withReady(
  existing: Condition[] | undefined,
  status: Condition['status'],
  reason: string,
  message: string,
  observedGeneration: number | undefined,
  now: Date = new Date(),
): Condition[] {
  return setCondition(existing, { type: CONDITIONS.ready, status, reason, message, observedGeneration }, now);
}

/** Ready=True(Admitted) set on `existing`, for the object's current generation. */
export function admittedConditions(
  existing: Condition[] | undefined,
  generation: number | undefined,
  now: Date,
): Condition[] {
  return withReady(existing, 'True', ADMITTED.reason, ADMITTED.message, generation, now);
}

/** True when writing `next` would change nothing a reader cares about (ignores lastTransitionTime). */
export function sameReady(existing: Condition[] | undefined, next: Condition[]): boolean {
  const a = getCondition(existing, CONDITIONS.ready);
  const b = getCondition(next, CONDITIONS.ready);
  if (!a || !b) return a === b;
  return (
    a.status === b.status &&
    a.reason === b.reason &&
    a.message === b.message &&
    a.observedGeneration === b.observedGeneration
  );
}
