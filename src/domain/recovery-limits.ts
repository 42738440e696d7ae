// The per-segment brakes of FailoverSegment spec.recoveryLimits (OpenKeel
// extension, kubectl/GitOps only): how a limit is written and what it comes to
// for a segment of n hosts. A limit is an int-or-string as NodeHealthCheck's
// maxUnhealthy: a count (2) or a percentage of the segment's hosts ("40%"). A
// percentage is rounded down, as NodeHealthCheck rounds maxUnhealthy
// (controllers/nodehealthcheck_controller.go getMaxUnhealthy:
// intstr.GetScaledValueFromIntOrPercent(maxUnhealthy, total, false)): the
// brake then holds one host early rather than one host late.

import type { IntOrPercent, RecoveryLimits } from '../model/types.ts';

const PERCENT = /^(100|[1-9]?[0-9])%$/;

/** Why `value` is not a limit, or undefined when it is one. */
function limitProblem(field: string, value: unknown): string | undefined {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return undefined;
  if (typeof value === 'string' && PERCENT.test(value)) return undefined;
  return `spec.recoveryLimits.${field} must be a count >= 0 or a percentage from 0% to 100% (e.g. 2 or "40%"), not ${JSON.stringify(value)}`;
}

/** The first problem of a segment's recoveryLimits, or undefined (absent limits are fine). */
export function recoveryLimitsProblem(limits: RecoveryLimits | undefined): string | undefined {
  if (limits === undefined) return undefined;
  if (typeof limits !== 'object' || limits === null || Array.isArray(limits)) {
    return 'spec.recoveryLimits must be an object with maxUnhealthyHosts and/or maxRecoveringHosts';
  }
  for (const field of ['maxUnhealthyHosts', 'maxRecoveringHosts'] as const) {
    const value = limits[field];
    if (value === undefined) continue;
    const problem = limitProblem(field, value);
    if (problem) return problem;
  }
  return undefined;
}

/** A valid limit as a host count for a segment of `total` hosts: a percentage rounded down. */
export function scaledLimit(limit: IntOrPercent, total: number): number {
  if (typeof limit === 'number') return limit;
  return Math.floor((Number.parseInt(limit, 10) * total) / 100);
}
