// A fault-injecting seam around the Kubernetes transport, for tests: it sits
// between KubeTransport's retry loop and one HTTP attempt (TransportOptions
// .intercept), so an injected failure goes through the same retry rules,
// error types and callers as a real one. Used by the fault tests to produce
// on demand what a stalled or restarting API server produces by chance: an
// answer that never comes, a write that was applied but whose answer was
// lost, a 5xx, a refused connection.

import { setTimeout as sleep } from 'node:timers/promises';
import { KubeError } from './client.ts';
import { NETWORK_ERROR_REASON, TIMEOUT_REASON } from './errors.ts';
import type { HttpCall, TransportInterceptor } from './transport.ts';

/**
 * - `unavailable`: a 503 from the server, nothing applied;
 * - `refused`: the connection was refused, provably before the request was sent (retried even for writes);
 * - `timeout`: no answer within the timeout, nothing applied (the request was sent; only reads are retried);
 * - `lost-response`: the request was applied, then its answer was lost (a timeout to the caller);
 * - `delay`: the answer comes delayMs late.
 */
export type KubeFault = 'unavailable' | 'refused' | 'timeout' | 'lost-response' | 'delay';

export interface KubeFaultRule {
  fault: KubeFault;
  /** Which calls it hits; every call when omitted. */
  match?: (call: HttpCall) => boolean;
  /** How many calls it hits before it is used up; unlimited when omitted. */
  times?: number;
  /** For `delay`, and how long a `timeout` takes to report. Default 0. */
  delayMs?: number;
}

/** Matches calls by method and a substring of their path, e.g. on('PATCH', '/notifications/'). */
export const on =
  (method: HttpCall['method'], pathPart: string) =>
  (call: HttpCall): boolean =>
    call.method === method && call.path.includes(pathPart);

export class KubeFaultInjector {
  private rules: Array<KubeFaultRule & { left: number }> = [];
  /** Faults injected so far, by kind. */
  readonly injected: Record<KubeFault, number> = {
    unavailable: 0,
    refused: 0,
    timeout: 0,
    'lost-response': 0,
    delay: 0,
  };

  /** Adds a rule; the first matching rule with calls left applies. */
  add(rule: KubeFaultRule): this {
    this.rules.push({ ...rule, left: rule.times ?? Infinity });
    return this;
  }

  clear(): void {
    this.rules = [];
  }

  /** The TransportOptions.intercept to pass to createKubeClient. */
  readonly intercept: TransportInterceptor = async (call, send) => {
    const rule = this.rules.find((r) => r.left > 0 && (r.match?.(call) ?? true));
    if (!rule) return send();
    rule.left -= 1;
    this.injected[rule.fault] += 1;
    const delayMs = rule.delayMs ?? 0;
    switch (rule.fault) {
      case 'unavailable':
        throw new KubeError(503, 'ServiceUnavailable', `${call.what}: injected 503`);
      case 'refused': {
        const err = new KubeError(0, NETWORK_ERROR_REASON, `${call.what}: injected ECONNREFUSED`);
        (err as { cause?: unknown }).cause = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
        throw err;
      }
      case 'timeout':
        if (delayMs) await sleep(delayMs);
        throw new KubeError(0, TIMEOUT_REASON, `${call.what}: injected timeout`);
      case 'lost-response':
        await send();
        if (delayMs) await sleep(delayMs);
        throw new KubeError(0, TIMEOUT_REASON, `${call.what}: injected timeout after the server applied it`);
      case 'delay':
        await sleep(delayMs);
        return send();
    }
  };
}
