import fc from 'fast-check';
import { manualClock } from '../../../src/clock';
import { createMemoryStore } from '../../../src/limit/memory-store';
import { agreeWithOracle, scenarioArb } from '../../contracts/limiter-properties';

describe('memory store properties', () => {
  describe('when random rules meet random arrival sequences', () => {
    it('decides exactly as the brute-force oracle and never exceeds a bound', async () => {
      await fc.assert(
        fc.asyncProperty(scenarioArb(40), async (scenario) => {
          const store = createMemoryStore({ clock: manualClock(0) });
          await agreeWithOracle(store, 'p', scenario);
        }),
        { numRuns: 300 },
      );
    });
  });
});
