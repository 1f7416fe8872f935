/**
 * One clock (docs/design.md "One clock"): the flow runs on the store's time. Every Redis reply
 * carries Redis TIME; the offset between it and this pod's clock is kept, so `now()` is the
 * store's time as this pod sees it. Release instants, not-befores and first-seen instants are
 * all on this clock, so two replicas with skewed pod clocks still space a producer alike and
 * a drainer compares a not-before with the clock that made it.
 *
 * A reply is read after TIME was taken — a little later, or much later when the event loop was
 * busy — so each sample (store time − pod time at arrival) is at most the true offset. The
 * offset kept is the largest sample of the last WINDOW_MS: a busy moment never moves the clock.
 */
import type { Clock } from '../clock';

export interface StoreClock extends Clock {
  /** A reply's store time (Redis TIME), seen now. */
  observe(storeNow: number): void;
  /** Store time minus pod time, ms. */
  offset(): number;
}

/** Samples older than this no longer count (a pod clock that was stepped is followed within it). */
export const WINDOW_MS = 10_000;

export const createStoreClock = (local: Clock): StoreClock => {
  // The largest sample of the current and of the previous half-window.
  let current = -Infinity;
  let previous = -Infinity;
  let windowStart = -Infinity;
  let offset = 0;
  return {
    now: () => local.now() + offset,
    observe(storeNow) {
      const localNow = local.now();
      if (localNow - windowStart >= WINDOW_MS / 2) {
        previous = localNow - windowStart >= WINDOW_MS ? -Infinity : current;
        current = -Infinity;
        windowStart = localNow;
      }
      current = Math.max(current, Math.round(storeNow - localNow));
      offset = Math.max(current, previous);
    },
    offset: () => offset,
  };
};
