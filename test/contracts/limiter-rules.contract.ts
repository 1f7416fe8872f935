/** Several limits in one decision, batches and inspect, for every store (part of the contract). */
import { brief, ones, rule, T0, type StoreUnderTest } from './limiter-harness';

export const describeRuleContract = (sut: () => StoreUnderTest): void => {
  const decideAt = async (spec: ReturnType<typeof rule>, at: number, k = 1, producer = 'r') =>
    brief((await sut().store.decide({ producer, rule: spec, sizes: ones(k), now: T0 + at })).decisions);

  describe('when one limit of several refuses', () => {
    it('charges nothing else, so the other limits and the bucket are as if the message never came', async () => {
      const spec = rule({ rate: '100/s', queue: '1m', limits: ['2/s log', '3/m log'] });
      expect(await decideAt(spec, 0, 3)).toEqual(['+0', '+10', 'x+1000 2/s log']);
      // The bucket's next slot is still 20 (a producer with a refusal outstanding takes a slot
      // left free in the last second: released at once).
      expect(await decideAt(spec, 1000)).toEqual(['+20']);
      expect(await decideAt(spec, 2000)).toEqual(['x+60000 3/m log']);
    });

    it('gives the latest notBefore among the refusing limits, and names that limit', async () => {
      const spec = rule({ rate: '1/s', queue: 0, limits: ['1/m log'] });
      expect(await decideAt(spec, 0, 2)).toEqual(['+0', 'x+60000 1/m log']);
    });
  });

  describe('when a batch meets its first refusal', () => {
    it('refuses every later message of the batch, in order, each spread one W/N further', async () => {
      const spec = rule({ algorithm: 'token-bucket', rate: '1000/s', burst: 1000, limits: ['2/s log'] });
      expect(await decideAt(spec, 0, 5)).toEqual(['+0', '+0', 'x+1000 2/s log', 'x+1500 2/s log', 'x+2000 2/s log']);
    });

    it('decides an empty batch without touching the state', async () => {
      const spec = rule({ rate: '10/s', queue: 0 });
      expect(await decideAt(spec, 0, 0)).toEqual([]);
      expect(await decideAt(spec, 0, 1)).toEqual(['+0']);
    });
  });

  describe('when a producer is inspected', () => {
    it('shows its next free slot and backlog, or nothing when idle', async () => {
      const spec = rule({ rate: '10/s', queue: 2 });
      await decideAt(spec, 0, 5, 'seen');
      expect(await sut().store.inspect('seen', spec, T0)).toEqual({ producer: 'seen', nextFreeAt: T0 + 300, backlogMs: 300, now: T0 });
      expect(await sut().store.inspect('never', spec, T0)).toEqual({ producer: 'never', backlogMs: 0, now: T0 });
      expect(await sut().store.inspect('seen', spec, T0 + 500)).toEqual({ producer: 'seen', backlogMs: 0, now: T0 + 500 });
    });
  });
};
