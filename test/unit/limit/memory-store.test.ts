import { manualClock } from '../../../src/clock';
import { compileRule } from '../../../src/limit/compile-rule';
import { createMemoryStore } from '../../../src/limit/memory-store';

const compiled = compileRule({ rate: '10/s', queue: '1s', limits: ['5/m'] });
if (!compiled.ok) throw new Error('rule');
const rule = compiled.rule;

describe('memory store', () => {
  describe('when many producers go idle', () => {
    it('drops their state as later decisions sweep past it, keeping memory bounded', async () => {
      const clock = manualClock(1_000_000);
      const store = createMemoryStore({ clock });
      for (let i = 0; i < 1000; i += 1) await store.decide({ producer: `p${i}`, rule, sizes: [1] });
      expect(store.size()).toBe(1000);
      clock.advance(66_001); // bucket empty, sliding window (1 min + one sub-window) over
      for (let i = 0; i < 300; i += 1) await store.decide({ producer: 'busy', rule, sizes: [1] });
      expect(store.size()).toBe(1);
    });

    it('forgets an expired producer when it is read again, and sweep() drops every expired one', async () => {
      const clock = manualClock(1_000_000);
      const store = createMemoryStore({ clock });
      await store.decide({ producer: 'a', rule, sizes: [1, 1] });
      await store.decide({ producer: 'b', rule, sizes: [1] });
      expect(await store.inspect('a', rule)).toMatchObject({ nextFreeAt: 1_000_200, backlogMs: 200 });
      clock.advance(70_000);
      expect(await store.inspect('a', rule)).toEqual({ producer: 'a', backlogMs: 0, now: 1_070_000 });
      expect(store.sweep()).toBe(1);
      expect(store.size()).toBe(0);
    });
  });

  describe('when no instant is passed', () => {
    it('decides on its injected clock', async () => {
      const store = createMemoryStore({ clock: manualClock(42_000) });
      const result = await store.decide({ producer: 'a', rule, sizes: [1, 1] });
      expect(result).toEqual({ now: 42_000, decisions: [{ admitted: true, at: 42_000 }, { admitted: true, at: 42_100 }] });
    });
  });
});
