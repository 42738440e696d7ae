// metav1.Condition helpers with apimachinery's meta.SetStatusCondition rules:
// one condition per type, and lastTransitionTime moves only when the status
// flips (a new reason or message is not a transition).
import type { Condition } from '../model/types.ts';
import { rfc3339Seconds } from '../time/format.ts';
import { systemClock } from '../time/clock.ts';

export interface ConditionInput {
  type: string;
  status: Condition['status'];
  /** CamelCase, machine-readable, required. */
  reason: string;
  message?: string;
  observedGeneration?: number;
}

/** Returns a new list with c set; the input is not modified. */
export function setCondition(
  conditions: Condition[] | undefined,
  c: ConditionInput,
  now: Date = systemClock.now(),
): Condition[] {
  const list = conditions ?? [];
  const previous = list.find((x) => x.type === c.type);
  const next: Condition = {
    type: c.type,
    status: c.status,
    reason: c.reason,
    message: c.message ?? '',
    lastTransitionTime:
      previous && previous.status === c.status && previous.lastTransitionTime
        ? previous.lastTransitionTime
        : rfc3339Seconds(now),
  };
  if (c.observedGeneration !== undefined) next.observedGeneration = c.observedGeneration;
  return previous ? list.map((x) => (x.type === c.type ? next : x)) : [...list, next];
}

export function getCondition(conditions: Condition[] | undefined, type: string): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

/** An absent condition counts as Unknown, so not True. */
export const isTrue = (conditions: Condition[] | undefined, type: string): boolean =>
  getCondition(conditions, type)?.status === 'True';

export const isFalse = (conditions: Condition[] | undefined, type: string): boolean =>
  getCondition(conditions, type)?.status === 'False';

export function removeCondition(conditions: Condition[] | undefined, type: string): Condition[] {
  return (conditions ?? []).filter((c) => c.type !== type);
}

/** True when a and b say the same thing (lastTransitionTime aside): writing b would change nothing. */
export function sameConditions(a: Condition[] | undefined, b: Condition[] | undefined): boolean {
  const x = a ?? [];
  const y = b ?? [];
  if (x.length !== y.length) return false;
  return x.every((c) => {
    const d = getCondition(y, c.type);
    return (
      !!d &&
      d.status === c.status &&
      d.reason === c.reason &&
      d.message === c.message &&
      d.observedGeneration === c.observedGeneration
    );
  });
}
