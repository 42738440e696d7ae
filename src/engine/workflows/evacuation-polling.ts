// Observing Nova instead of sleeping (fixes upstream B13a). Masakari sleeps a
// fixed wait_period_after_service_update and polls evacuations every
// verify_interval; here every wait is a poll with a short first delay that
// grows geometrically up to a cap, bounded by Masakari's timeout option. The
// first answers come quickly when Nova is quick, and Nova never sees more than
// one request per cap interval per waiter once the wait drags on.

import { fixedSchedule, pollUntil, PollTimeout } from '../../time/poll.ts';
import type { PollSchedule } from '../../time/poll.ts';
import { RecoveryFailed } from './context.ts';
import type { WorkflowContext } from './context.ts';
import type { UpdateDetails } from './tasks.ts';

/**
 * Polls an evacuation or a stop: first look after 100 ms, then x1.5 up to
 * verify_interval. When the run has already seen how long such an operation
 * takes (`expectedMs`, the fastest one so far), the first look waits until
 * just before that time and the polling restarts at 50 ms from there: the
 * confirmation then lands within ~50 ms of the real end instead of up to a
 * verify_interval late, with fewer GETs than fixed-interval polling.
 */
export function settleSchedule(
  verifyIntervalSeconds: number,
  timeoutSeconds: number,
  expectedMs?: number,
): PollSchedule {
  const cap = Math.max(50, verifyIntervalSeconds * 1000);
  const short = Math.min(100, cap);
  if (expectedMs === undefined) {
    return { firstDelayMs: short, thenDelayMs: short, factor: 1.5, maxDelayMs: cap, timeoutMs: timeoutSeconds * 1000 };
  }
  // The expectation is the fastest confirmation so far, which overshoots the real duration by up to one
  // poll step; looking at 95 % of it and then every 50 ms lets it converge to within ~50 ms of the real end.
  const firstDelayMs = Math.max(short, Math.floor(expectedMs * 0.95));
  const thenDelayMs = Math.min(50, cap);
  return { firstDelayMs, thenDelayMs, factor: 1.5, maxDelayMs: cap, timeoutMs: timeoutSeconds * 1000 };
}

/** Polls the failed host's nova-compute service: it is often already down, so the caller probes first itself. */
export function serviceDownSchedule(verifyIntervalSeconds: number, timeoutSeconds: number): PollSchedule {
  const cap = Math.max(50, verifyIntervalSeconds * 1000);
  return { firstDelayMs: Math.min(250, cap), factor: 2, maxDelayMs: cap, timeoutMs: timeoutSeconds * 1000 };
}

/**
 * Masakari's fixed-interval confirmation (FixedIntervalWithTimeoutLoopingCall
 * every verify_interval, up to one of its wait_period_* options) as the
 * instance and process workflows use it: on timeout the task's last progress
 * line is `failure` (progress 1.0) and the recovery fails with that message.
 */
export async function confirmWithin(
  ctx: Pick<WorkflowContext, 'config' | 'clock' | 'signal'>,
  what: string,
  confirmed: () => Promise<boolean>,
  timeoutSeconds: number,
  failure: string,
  update: UpdateDetails,
): Promise<void> {
  const schedule = fixedSchedule(ctx.config.DEFAULT.verify_interval * 1000, timeoutSeconds * 1000);
  try {
    await pollUntil(what, async () => (await confirmed()) || undefined, schedule, ctx.clock, ctx.signal);
  } catch (err) {
    if (!(err instanceof PollTimeout)) throw err;
    await update(failure, 1.0);
    throw new RecoveryFailed(failure);
  }
}
