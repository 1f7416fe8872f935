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
  it('is slow once the requests of the last ten seconds took, past the slack, two seconds of it in all', () => {
    const broker = createSlowBroker(100);
    expect(broker.slow(answer(broker, 1000, SLOW_MIN_REQUESTS - 1, 300, () => 300) + 300)).toBe(false);
    const last = answer(broker, 1000 + SLOW_MIN_REQUESTS * 300, 1, 300, () => 300);
    expect(broker.slow(last)).toBe(true);
  });

  it('is not slow before it has seen SLOW_MIN_REQUESTS requests, nor for requests as long as the slack', () => {
    const few = createSlowBroker(100);
    expect(few.slow(answer(few, 1000, SLOW_MIN_REQUESTS - 1, 300, () => 300))).toBe(false);
    const onTheSlack = createSlowBroker(100);
    expect(onTheSlack.slow(answer(onTheSlack, 1000, 50, 100, () => 100))).toBe(false);
  });

  it('is not slow for a start\'s slow first requests, a stall, a slow spell of two seconds among quick ones, or a quick broker', () => {
    const broker = createSlowBroker(100);
    // A start's first two requests at 150 ms, 3 s of 3 ms requests, a 545 ms stall, 2 s at 125 ms, then
    // quick again: 50 + 50 + 445 + 16 × 25 = 945 ms past the slack.
    let at = answer(broker, 1000, 2, 150, () => 150);
    at = answer(broker, at + 10, 300, 10, () => 3);
    expect(broker.slow(at)).toBe(false);
    at = answer(broker, at + 545, 1, 1, () => 545);
    expect(broker.slow(at)).toBe(false);
    at = answer(broker, at + 125, 16, 125, () => 125);
    expect(broker.slow(at)).toBe(false);
    at = answer(broker, at + 10, 100, 10, () => 3);
    expect(broker.slow(at + 1)).toBe(false);
    // Spells of 2 s at 300 ms in every 10 s (about 1.2–1.4 s past the slack in any window), quick between.
    const spells = createSlowBroker(100);
    at = 1000;
    for (let spell = 0; spell < 4; spell += 1) {
      at = answer(spells, at + 300, 7, 300, () => 300);
      at = answer(spells, at + 10, 800, 10, () => 3);
      expect(spells.slow(at)).toBe(false);
    }
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

  it('is slow behind requests quick and slow by turns, though half of them are quick', () => {
    const broker = createSlowBroker(100);
    // 3 ms, then 250 ms, and so on: 13 pairs (1,950 ms past the slack) are not yet slow, 14 (2,100) are.
    let at = 1000;
    for (let k = 0; k < 28; k += 1) {
      at += k % 2 === 0 ? 3 : 250;
      broker.request(k % 2 === 0 ? 3 : 250, at);
      if (k === 25) expect(broker.slow(at)).toBe(false);
    }
    expect(broker.slow(at)).toBe(true);
  });

  it('is quick again once what its requests of the window took past the slack is less than two seconds, and forgets a slow partition silent for a window', () => {
    const broker = createSlowBroker(100);
    // Four 250 ms requests a second in seconds 1–10 (150 ms past the slack each, 600 a second).
    const last = answer(broker, 1000, 40, 250, () => 250);
    expect(broker.slow(last)).toBe(true);
    // Quick requests: in second 16 the window holds seconds 7–10 (2,400 ms past the slack), in second 17 seconds 8–10 (1,800).
    answer(broker, last + 10, 70, 82, () => 3);
    broker.request(3, 16_999);
    expect(broker.slow(16_999)).toBe(true);
    broker.request(3, 17_000);
    expect(broker.slow(17_000)).toBe(false);

    const silent = createSlowBroker(100);
    const at = answer(silent, 1000, 40, 250, () => 250);
    expect(silent.slow(at + 300)).toBe(true);
    expect(silent.slow(at + SLOW_WINDOW_MS + 1000)).toBe(false);
  });
});
