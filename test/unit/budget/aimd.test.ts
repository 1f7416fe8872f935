import { aimdStep, DECREASE, FLOOR, INCREASE } from '../../../src/budget/aimd';

describe('the followed budget (AIMD)', () => {
  it('shrinks by DECREASE while the group lags and grows by INCREASE of the rate while it does not', () => {
    expect(aimdStep(1000, true, 1000)).toBe(1000 * DECREASE);
    expect(aimdStep(500, false, 1000)).toBe(500 + 1000 * INCREASE);
    expect(aimdStep(990, false, 1000)).toBe(1000);
    expect(aimdStep(1, true, 1000)).toBe(1000 * FLOOR);
  });

  describe('when the downstream consumer reads at a fixed slow rate', () => {
    it('settles near that rate (the mean over the last minute within 20 %)', () => {
      const rate = 300;
      const consumer = 100;
      const maxLag = 3 * rate; // maxLag: 3s of the budget's rate
      let budget = rate;
      let lag = 0;
      const seen: number[] = [];
      for (let second = 0; second < 180; second += 1) {
        // The producers offer more than the budget: the downstream topic gets the budget.
        lag = Math.max(0, lag + budget - consumer);
        budget = aimdStep(budget, lag > maxLag, rate);
        if (second >= 120) seen.push(budget);
      }
      const mean = seen.reduce((a, b) => a + b, 0) / seen.length;
      expect(Math.abs(mean - consumer) / consumer).toBeLessThan(0.2);
    });
  });
});
