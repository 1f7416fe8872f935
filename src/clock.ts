/** Time is injected everywhere: tests pass their own clock. Epoch milliseconds. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock a test moves by hand. */
export const manualClock = (start = 0): Clock & { set(t: number): void; advance(ms: number): void } => {
  let t = start;
  return {
    now: () => t,
    set: (value) => {
      t = value;
    },
    advance: (ms) => {
      t += ms;
    },
  };
};
