// The requireFencing precondition (OpenKeel extension; FencingPrecondition): a host-failure notification
// of a segment with spec.requireFencing never evacuates a host that is not
// proven fenced. It stays `new` (visible, rechecked, expired as usual) until
// the proof appears. A long wait is reported once per reason, not at every
// recheck; a notification with a note is waiting, which also tells the
// periodic task it is not stuck.

import { EVENT_REASONS } from '../telemetry/event-reasons.ts';
import type { AdmittedNotification } from '../intake/admitted-notification.ts';
import { emitPhaseEvent } from '../telemetry/phase-events.ts';
import { segmentOf } from '../deps/lookups.ts';
import type { FencingVerdict, ProcessorDeps } from '../deps/processor-deps.ts';

/** How often a notification waiting for proof of fencing is looked at again. */
export const FENCING_RECHECK_MS = 5_000;

export class FencingWait {
  /** Last fencing-wait message per notification held at the gate. */
  private readonly notes = new Map<string, string>();

  constructor(private readonly deps: ProcessorDeps) {}

  /** True while the source host of a requireFencing segment is not proven fenced (logged and evented once per reason). */
  async holds(n: AdmittedNotification): Promise<boolean> {
    const { fencing, log } = this.deps;
    if (!segmentOf(this.deps, n)?.spec.requireFencing || !fencing) return false;
    let verdict: FencingVerdict;
    try {
      verdict = await fencing(n, n.spec.hostname);
    } catch (err) {
      verdict = { proven: false, missing: `the fencing proof could not be read: ${(err as Error).message}` };
    }
    const key = n.metadata.name;
    const fields = { notification: n.status.uuid, host: n.spec.hostname };
    if (verdict.proven) {
      this.notes.delete(key);
      log.info({ ...fields, proof: verdict.proof }, 'host proven fenced');
      return false;
    }
    const note = `Waiting for proof that host ${n.spec.hostname} is fenced before evacuating: ${verdict.missing}`;
    if (this.notes.get(key) !== note) {
      this.notes.set(key, note);
      log.warn(fields, note);
      emitPhaseEvent(this.deps, n, 'Warning', EVENT_REASONS.waitingForFencing, note);
    }
    return true;
  }

  /** Held at the gate and looked at every few seconds: not stuck. */
  isWaiting(key: string): boolean {
    return this.notes.has(key);
  }

  forget(key: string): void {
    this.notes.delete(key);
  }

  clear(): void {
    this.notes.clear();
  }
}
