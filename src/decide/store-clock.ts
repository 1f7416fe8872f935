/**
 * One clock (DESIGN.md "One clock"): the flow runs on the store's time. Every Redis reply
 * carries Redis TIME; the offset between it and this pod's clock is kept, so `now()` is the
 * store's time as this pod sees it. Release instants, not-befores and first-seen instants are
 * all on this clock, so two replicas with skewed pod clocks still space a producer alike and
 * a drainer compares a not-before with the clock that made it.
 */
import type { Clock } from '../clock';

export interface StoreClock extends Clock {
  /** A reply's store time (Redis TIME), seen now. */
  observe(storeNow: number): void;
  /** Store time minus pod time, ms. */
  offset(): number;
}

/** Offsets within this many ms of the kept one are reply jitter, not a clock change. */
export const STEADY_MS = 5;

export const createStoreClock = (local: Clock): StoreClock => {
  let offset = 0;
  return {
    now: () => local.now() + offset,
    observe(storeNow) {
      const localNow = local.now();
      // Replies carry whole ms and arrive a little after TIME was read: the measured offset
      // wobbles by a ms or two. Only a real change moves it, so timers do not jitter.
      const measured = Math.round(storeNow - localNow);
      if (Math.abs(measured - offset) > STEADY_MS) offset = measured;
    },
    offset: () => offset,
  };
};
