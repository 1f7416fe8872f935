import { manualClock } from '../../../src/clock';
import { createAnswerCache } from '../../../src/http/answer-cache';

describe('the answer cache', () => {
  describe('when more keys are asked for than it keeps', () => {
    it('forgets the oldest, so a flood of distinct ids cannot grow it without bound', async () => {
      const clock = manualClock(0);
      const load = jest.fn(async (key: string) => key.toUpperCase());
      const cached = createAnswerCache(load, { ttlMs: 1000, maxEntries: 2, clock });
      for (const key of ['a', 'b', 'c']) await cached(key);
      await cached('c');
      await cached('b');
      expect(load).toHaveBeenCalledTimes(3);
      await expect(cached('a')).resolves.toBe('A');
      expect(load).toHaveBeenCalledTimes(4);
    });

    it('forgets the least recently asked for, not the first kept', async () => {
      const clock = manualClock(1000);
      const load = jest.fn(async (key: string) => key.toUpperCase());
      const cached = createAnswerCache(load, { ttlMs: 1000, maxEntries: 2, clock });
      for (const key of ['a', 'b', 'a', 'c', 'a']) await cached(key);
      expect(load.mock.calls.map(([key]) => key)).toEqual(['a', 'b', 'c']);
    });
  });
});
