import { STUCK_MS } from '../../src/hold/release-lanes';
import { SECOND_MS, SECOND_SPAN_MS } from '../../src/hold/second-rule';
import { createSlowBroker } from '../../src/produce/slow-broker';

/** An answer the broker model gives at `at` (a test drives it on its manual clock). */
export interface Answer {
  at: number;
  ack(): void;
}

/**
 * A broker behind a sender with one request in flight (as src/produce/batch-sender.ts keeps one
 * per partition): what is written while a request waits goes in the next one, which takes
 * `tookOf(now, request)` ms; its messages are appended a millisecond before its answer. Each
 * answer says whether the partition is slow for good, as the sender's does (its requests
 * measured with the wiring's bounds: src/app/wiring.ts). `answers` holds the answers due, for
 * the test to give at their instants; `appended` every append time.
 */
export const oneRequestInFlight = (clock: { now(): number }, tookOf: (now: number, request: number) => number) => {
  const appended: number[] = [];
  const answers: Answer[] = [];
  const broker = createSlowBroker(SECOND_SPAN_MS - SECOND_MS, STUCK_MS);
  let queued: { n: number; done(answer: { appendedAt: number; slow: boolean }): void }[] = [];
  let requests = 0;
  let inFlight = false;
  const request = (): void => {
    const batch = queued;
    queued = [];
    inFlight = true;
    const tookMs = tookOf(clock.now(), requests++);
    const appendAt = clock.now() + tookMs - 1;
    const at = clock.now() + tookMs;
    answers.push({
      at,
      ack: () => {
        inFlight = false;
        broker.request(tookMs, at);
        const answer = { appendedAt: appendAt, slow: broker.slow(at) };
        for (const { n, done } of batch) {
          for (let k = 0; k < n; k += 1) appended.push(appendAt);
          done(answer);
        }
        if (queued.length > 0) request();
      },
    });
  };
  /** Writes `n` messages; settles with their request's answer (their append time, the partition slow or not). */
  const write = (n = 1): Promise<{ appendedAt: number; slow: boolean }> => new Promise((resolve) => {
    queued.push({ n, done: resolve });
    if (!inFlight) request();
  });
  return { write, appended, answers };
};
