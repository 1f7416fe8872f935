import { createSlowBroker, SLOW_MIN_REQUESTS, SLOW_WINDOW_MS } from '../../../src/produce/slow-broker';

/** Requests answered `every` ms apart from `from`, each taking `took(k)` ms; returns the last answer's instant. */
const answer = (broker: ReturnType<typeof createSlowBroker>, from: number, count: number, every: number, took: (k: number) => number): number => {
  let at = from;
  for (let k = 0; k < count; k += 1) {
    at = from + k * every;
    broker.request(took(k), at);
  }
  return at;
};

describe('the slow broker of a partition', () => {
  it('is slow once most requests of the last ten seconds took longer than the slack', () => {
    const broker = createSlowBroker(100);
    const last = answer(broker, 1000, SLOW_MIN_REQUESTS, 200, () => 200);
    expect(broker.slow(last)).toBe(true);
  });

  it('is not slow before it has seen SLOW_MIN_REQUESTS requests, nor for requests as long as the slack', () => {
    const few = createSlowBroker(100);
    expect(few.slow(answer(few, 1000, SLOW_MIN_REQUESTS - 1, 300, () => 300))).toBe(false);
    const onTheSlack = createSlowBroker(100);
    expect(onTheSlack.slow(answer(onTheSlack, 1000, 50, 100, () => 100))).toBe(false);
  });

  it('is not slow for a stall, a slow spell of two seconds among quick ones, or a quick broker', () => {
    const broker = createSlowBroker(100);
    // 3 s of 3 ms requests, a 545 ms stall, 2 s at 130 ms, then quick again.
    let at = answer(broker, 1000, 300, 10, () => 3);
    at = answer(broker, at + 545, 1, 1, () => 545);
    expect(broker.slow(at)).toBe(false);
    at = answer(broker, at + 130, 15, 130, () => 130);
    expect(broker.slow(at)).toBe(false);
    at = answer(broker, at + 10, 100, 10, () => 3);
    expect(broker.slow(at + 1)).toBe(false);
  });

  it('leaves requests that took longer than an outage to the outage rule: a ten-second pause does not make the partition slow', () => {
    const broker = createSlowBroker(100, 500);
    // 3 s of 3 ms requests, then 16 requests answered together after a 10 s pause, then quick again.
    let at = answer(broker, 1000, 300, 10, () => 3);
    at = answer(broker, at + 10_000, 16, 1, () => 9_500);
    at = answer(broker, at + 1, 3, 1, () => 3);
    expect(broker.slow(at)).toBe(false);
    // Without the outage's bound they would be slow requests, most of the window's.
    const unbounded = createSlowBroker(100);
    at = answer(unbounded, 1000, 300, 10, () => 3);
    at = answer(unbounded, at + 10_000, 16, 1, () => 9_500);
    at = answer(unbounded, at + 1, 3, 1, () => 3);
    expect(unbounded.slow(at)).toBe(true);
  });

  it('is quick again as soon as most requests of the window are quick, and forgets a slow partition silent for a window', () => {
    const broker = createSlowBroker(100);
    let at = answer(broker, 1000, 40, 250, () => 250);
    expect(broker.slow(at)).toBe(true);
    // 40 slow requests in the window: slow while they are at least SLOW_SHARE of the requests, 40 of 53 with 13 quick ones, not 40 of 54.
    at = answer(broker, at + 3, 13, 3, () => 3);
    expect(broker.slow(at)).toBe(true);
    at = answer(broker, at + 3, 1, 3, () => 3);
    expect(broker.slow(at)).toBe(false);

    const silent = createSlowBroker(100);
    at = answer(silent, 1000, 40, 250, () => 250);
    expect(silent.slow(at + 300)).toBe(true);
    expect(silent.slow(at + SLOW_WINDOW_MS + 1000)).toBe(false);
  });
});
