// The one retry loop for optimistic-concurrency conflicts, after client-go's
// k8s.io/client-go/util/retry (RetryOnConflict / OnError over
// wait.ExponentialBackoff): run `fn`; when it fails with a 409 Conflict (the
// object changed between our read and our compare-and-swap write), wait a
// jittered, growing delay and run it again, at most `steps` times in all.
// `fn` must re-read what it writes on every run. Any other error ends the
// loop at once; after the last step the last conflict is thrown, as
// client-go returns it.
//
// A lost race that is not a 409 from the API server (a claim that vanished
// between our create and our read, a compare-and-swap delete that found a
// newer version) is reported by throwing lostRace(...), so one loop serves
// every read-modify-write of the store, the engine and the import.
import { KubeError, isAlreadyExists, isConflict } from './client.ts';

/** wait.Backoff's fields (client-go k8s.io/apimachinery/pkg/util/wait/backoff.go). */
export interface Backoff {
  /** Runs of `fn` in all (client-go: Steps). */
  steps: number;
  /** Delay before the first retry (client-go: Duration). */
  delayMs: number;
  /** Each further delay is the previous one times this (client-go: Factor). */
  factor: number;
  /** Each delay is stretched by a random fraction of up to this much of itself (client-go: Jitter). */
  jitter: number;
  /** No delay grows past this (client-go: Cap). */
  capMs: number;
}

/**
 * THE backoff of every conflict loop. client-go's DefaultRetry (5 steps of
 * 10 ms) suits controllers that requeue; the store answers a client request
 * instead, and its hottest shared objects (the id sequence, a notification's
 * status written by the engine and the API) can meet a few writers at once.
 * Ten steps from 5 ms doubling to a 500 ms cap, each stretched by up to 100%
 * jitter so racing replicas fall out of step: at most about 3.3 s of waiting
 * before the conflict is given up, and none when there is no conflict.
 */
export const CONFLICT_BACKOFF: Readonly<Backoff> = Object.freeze({
  steps: 10,
  delayMs: 5,
  factor: 2,
  jitter: 1,
  capMs: 500,
});

export interface RetryOptions {
  /** Waits between runs (an engine clock in tests); default setTimeout. */
  sleep?: (ms: number) => Promise<void>;
  /** Random in [0, 1) for the jitter; default Math.random. */
  random?: () => number;
}

const defaultSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The delay before retry `n` (0 for the first) of `backoff`, as wait.Backoff's
 * Step computes it: Duration × Factor^n, capped, then stretched by the jitter.
 */
export function backoffDelay(backoff: Backoff, n: number, random: () => number = Math.random): number {
  const capped = Math.min(backoff.delayMs * backoff.factor ** Math.min(n, 64), backoff.capMs);
  return Math.round(capped * (1 + backoff.jitter * random()));
}

/** The delays between runs of `backoff`, jitter applied (steps - 1 of them). */
export function backoffDelays(backoff: Backoff, random: () => number = Math.random): number[] {
  return Array.from({ length: Math.max(0, backoff.steps - 1) }, (_, n) => backoffDelay(backoff, n, random));
}

/**
 * One write's transport errors, 429 and 5xx (the engine's status and host
 * writes): six runs, 200 ms doubling, no jitter (one writer per object, so
 * nothing to fall out of step with), about 6 s of waiting in all.
 */
export const TRANSIENT_BACKOFF: Readonly<Backoff> = Object.freeze({
  steps: 6,
  delayMs: 200,
  factor: 2,
  jitter: 0,
  capMs: 3_200,
});

/** client-go's retry.OnError: retries `fn` while `retriable` accepts its error, up to backoff.steps runs. */
export async function retryOnError<T>(
  backoff: Backoff,
  retriable: (e: unknown) => boolean,
  fn: (attempt: number) => Promise<T>,
  opts: RetryOptions = {},
): Promise<T> {
  const sleep = opts.sleep ?? defaultSleep;
  const delays = backoffDelays(backoff, opts.random);
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn(attempt);
    } catch (e) {
      if (!retriable(e) || attempt >= backoff.steps) throw e;
    }
    await sleep(delays[attempt - 1] ?? backoff.capMs);
  }
}

/**
 * 409 Conflict, as client-go's errors.IsConflict: not 409 AlreadyExists,
 * which is an answer (the name is taken), not a stale read. A caller for
 * whom AlreadyExists is a lost race says so with lostRace.
 */
export const isStaleWrite = (e: unknown): boolean => isConflict(e) && !isAlreadyExists(e);

/** client-go's retry.RetryOnConflict: retries `fn` while it fails with 409 Conflict. */
export function retryOnConflict<T>(
  backoff: Backoff,
  fn: (attempt: number) => Promise<T>,
  opts?: RetryOptions,
): Promise<T> {
  return retryOnError(backoff, isStaleWrite, fn, opts);
}

/** A race lost without a 409 from the API server, as a Conflict so that retryOnConflict runs `fn` again. */
export function lostRace(message: string): KubeError {
  return new KubeError(409, 'Conflict', message);
}

/** Runs `fn` under retryOnConflict; a conflict left after the last step becomes `exhausted(lastConflict)`. */
export async function retryOnConflictOr<T>(
  backoff: Backoff,
  fn: (attempt: number) => Promise<T>,
  exhausted: (last: unknown) => Error,
  opts?: RetryOptions,
): Promise<T> {
  try {
    return await retryOnConflict(backoff, fn, opts);
  } catch (e) {
    throw isStaleWrite(e) ? exhausted(e) : e;
  }
}
