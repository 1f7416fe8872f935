import { manualClock } from '../../../src/clock';
import { createMemoryStore } from '../../../src/limit/memory-store';
import { describeLimiterStoreContract } from '../../contracts/limiter-store.contract';

describeLimiterStoreContract('memory store', async () => {
  const store = createMemoryStore({ clock: manualClock(0) });
  return {
    store,
    forgetsAfter: async (producer, now) => {
      const at = store.expiresAt(producer);
      return at === undefined ? undefined : at - now;
    },
  };
});
