// One term of leadership: everything the engine does happens inside one
// (NotificationProcessor.startLeading opens it, stopLeading ends it).

export interface LeadershipTerm {
  /** The fencing token written to status.engine.owner by the runs of this term. */
  token: string;
  /** Aborts when this process stops leading. */
  signal: AbortSignal;
  /** When the term ends: is this process shutting down (still holding the Lease) rather than a lost Lease? */
  isGracefulStop: () => boolean;
  /** Asked right before every Nova side effect (src/runtime/lease-fence.ts): false cancels the run instead. */
  holdsLease: () => boolean;
}
