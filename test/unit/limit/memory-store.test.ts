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

  describe('when a producer is started at a given slot (the local fallback)', () => {
    it('admits its next message at that slot, keeps its windows, and keeps it at least until then', async () => {
      const clock = manualClock(1_000_000);
      const store = createMemoryStore({ clock });
      await store.decide({ producer: 'a', rule, sizes: [1, 1, 1, 1, 1] }); // the 5/m window is full
      store.startAt('a', rule, { tat: 1_000_700, tail: 0 });
      expect(store.expiresAt('a')).toBeGreaterThanOrEqual(1_000_700);
      const [next] = (await store.decide({ producer: 'a', rule, sizes: [1] })).decisions;
      expect(next).toMatchObject({ admitted: false, reason: '5/m' });
      store.startAt('b', rule, { tat: 1_000_700, tail: 0 });
      expect(store.expiresAt('b')).toBe(1_000_700);
      expect((await store.decide({ producer: 'b', rule, sizes: [1, 1] })).decisions).toEqual([
        { admitted: true, at: 1_000_700 },
        { admitted: true, at: 1_000_800 },
      ]);
    });

    it('forgets a producer the shared store decided since, telling how far its refusals reached', async () => {
      const clock = manualClock(1_000_000);
      const store = createMemoryStore({ clock });
      expect(store.forget('a')).toBe(0);
      await store.decide({ producer: 'a', rule, sizes: [1, 1, 1, 1, 1, 1] }); // the sixth refused by 5/m
      expect(store.forget('a')).toBeGreaterThan(1_000_000);
      expect(store.size()).toBe(0);
      expect((await store.decide({ producer: 'a', rule, sizes: [1] })).decisions).toEqual([{ admitted: true, at: 1_000_000 }]);
    });

    it('lets a producer whose refusals reach ahead take a slot its bucket left free, as the shared store would', async () => {
      const clock = manualClock(1_000_000);
      const store = createMemoryStore({ clock });
      const spacing = compileRule({ rate: '10/s', queue: 0 });
      if (!spacing.ok) throw new Error('rule');
      store.startAt('a', spacing.rule, { tat: 999_900, tail: 1_000_500 });
      store.startAt('b', spacing.rule, { tat: 999_900, tail: 0 });
      expect((await store.decide({ producer: 'a', rule: spacing.rule, sizes: [1] })).decisions).toEqual([{ admitted: true, at: 999_900 }]);
      expect((await store.decide({ producer: 'b', rule: spacing.rule, sizes: [1] })).decisions).toEqual([{ admitted: true, at: 1_000_000 }]);
    });
  });

  describe('when a retry is decided as of its turn for a producer already forgotten', () => {
    it('counts its slots from now: nothing is known of the time before (Redis: the key is gone)', async () => {
      const clock = manualClock(1_000_000);
      const store = createMemoryStore({ clock });
      const spacing = compileRule({ rate: '10/s', queue: 0 });
      if (!spacing.ok) throw new Error('rule');
      expect((await store.decide({ producer: 'a', rule: spacing.rule, sizes: [1] })).decisions).toEqual([{ admitted: true, at: 1_000_000 }]);
      clock.advance(200); // its bucket emptied at 1_000_100: forgotten
      const late = await store.decide({ producer: 'a', rule: spacing.rule, sizes: [1, 1], asOf: 999_900 });
      expect(late.decisions).toEqual([{ admitted: true, at: 1_000_200 }, { admitted: false, at: 1_000_300, reason: 'rate' }]);
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
