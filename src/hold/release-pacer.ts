/**
 * Keeps a producer's releases at least one emission interval apart in local time. Release
 * instants from the limiter are already spaced; but when this process is late (a stalled
 * event loop, a busy machine) several due messages would leave at once and the broker would
 * see a burst above the quota. The pacer spreads such a catch-up one interval apart instead,
 * so the outflow never exceeds the rate in any window. Only for leaky-bucket rules (a token
 * bucket admits bursts on purpose: spacing 0).
 */
export interface ReleasePacer {
  /** The instant this release may happen: max(now, the producer's previous release + spacing). Reserves it. */
  slot(producer: string, spacingMs: number, now: number): number;
}

/** Within this many ms of its slot a release goes at once (timers fire a little late). */
export const PACER_TOLERANCE_MS = 2;

export const createReleasePacer = ({ maxProducers = 50_000 }: { maxProducers?: number } = {}): ReleasePacer => {
  const next = new Map<string, number>();
  return {
    slot(producer, spacingMs, now) {
      if (!(spacingMs > 0)) return now;
      const free = next.get(producer);
      const at = free === undefined || free <= now + PACER_TOLERANCE_MS ? now : free;
      next.set(producer, at + spacingMs);
      if (next.size > maxProducers) {
        for (const [id, t] of next) if (t < now) next.delete(id);
      }
      return at;
    },
  };
};
