/** An answer the broker model gives at `at` (a test drives it on its manual clock). */
export interface Answer {
  at: number;
  ack(): void;
}

/**
 * A broker behind a sender with one request in flight (as src/produce/batch-sender.ts keeps one
 * per partition): what is written while a request waits goes in the next one, which takes
 * `tookOf(now, request)` ms; its messages are appended a millisecond before its answer. `answers`
 * holds the answers due, for the test to give at their instants; `appended` every append time.
 */
export const oneRequestInFlight = (clock: { now(): number }, tookOf: (now: number, request: number) => number) => {
  const appended: number[] = [];
  const answers: Answer[] = [];
  let queued: { n: number; done(appendedAt: number): void }[] = [];
  let requests = 0;
  let inFlight = false;
  const request = (): void => {
    const batch = queued;
    queued = [];
    inFlight = true;
    const tookMs = tookOf(clock.now(), requests++);
    const appendAt = clock.now() + tookMs - 1;
    answers.push({
      at: clock.now() + tookMs,
      ack: () => {
        inFlight = false;
        for (const { n, done } of batch) {
          for (let k = 0; k < n; k += 1) appended.push(appendAt);
          done(appendAt);
        }
        if (queued.length > 0) request();
      },
    });
  };
  /** Writes `n` messages; settles with their append time once their request is answered. */
  const write = (n = 1): Promise<number> => new Promise((resolve) => {
    queued.push({ n, done: resolve });
    if (!inFlight) request();
  });
  return { write, appended, answers };
};
