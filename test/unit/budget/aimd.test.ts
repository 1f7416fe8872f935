import { aimdStep, DECREASE, FLOOR, followSignal, INCREASE } from '../../../src/budget/aimd';

describe('the followed budget (AIMD)', () => {
  it('shrinks by DECREASE while the group lags and grows by INCREASE of the rate while it does not', () => {
    expect(aimdStep(1000, true, 1000)).toBe(1000 * DECREASE);
    expect(aimdStep(500, false, 1000)).toBe(500 + 1000 * INCREASE);
    expect(aimdStep(990, false, 1000)).toBe(1000);
    expect(aimdStep(1, true, 1000)).toBe(1000 * FLOOR);
  });

  it('shrinks while the lag is beyond maxLag and not shrinking, holds while it shrinks, grows within maxLag', () => {
    expect(followSignal(300, undefined, 200)).toBe(true);
    expect(followSignal(300, 250, 200)).toBe(true);
    expect(followSignal(300, 300, 200)).toBe(true);
    expect(followSignal(300, 350, 200)).toBeUndefined();
    expect(followSignal(200, 900, 200)).toBe(false);
  });

  /** Seconds of a consumer reading `consumer`/s while the producers offer more than the budget. */
  const simulate = (rate: number, consumer: number, maxLag: number, seconds: number) => {
    let budget = rate;
    let lag = 0;
    let previous: number | undefined;
    const budgets: number[] = [];
    const lags: number[] = [];
    for (let second = 0; second < seconds; second += 1) {
      lag = Math.max(0, lag + budget - consumer);
      const signal = followSignal(lag, previous, maxLag);
      previous = lag;
      if (signal !== undefined) budget = aimdStep(budget, signal, rate);
      budgets.push(budget);
      lags.push(lag);
    }
    return { budgets, lags };
  };
  const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;

  describe.each([[300, 100, 900], [300, 150, 200], [2000, 500, 1000], [1000, 900, 100]])('when the downstream consumer reads at a fixed slow rate (budget %d/s, consumer %d/s, maxLag %d)', (rate, consumer, maxLag) => {
    it('settles near that rate (the mean over the last minute within 10 %) and the lag stays within 3 × maxLag once settled (after a minute)', () => {
      const { budgets, lags } = simulate(rate, consumer, maxLag, 180);
      expect(Math.abs(mean(budgets.slice(120)) - consumer) / consumer).toBeLessThan(0.1);
      expect(Math.max(...lags.slice(60))).toBeLessThan(3 * maxLag + rate * INCREASE * 2);
      // Never far below what the consumer reads once settled (no deep overshoot).
      expect(Math.min(...budgets.slice(60))).toBeGreaterThan(consumer * DECREASE * 0.85);
    });
  });
});
