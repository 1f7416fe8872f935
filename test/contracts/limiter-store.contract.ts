/**
 * The limiter's conformance suite: every store (memory, Redis, Redis Cluster) must pass it.
 * Instants are passed explicitly (`now`), relative to T0. docs/design.md "Semantics of the limiter".
 */
import { brief, ones, rule, T0, type StoreFactory, type StoreUnderTest } from './limiter-harness';
import { describeWindowContract } from './limiter-windows.contract';
import { describeRuleContract } from './limiter-rules.contract';

export const describeLimiterStoreContract = (name: string, factory: StoreFactory): void => {
  describe(`limiter store contract: ${name}`, () => {
    let sut: StoreUnderTest;
    beforeEach(async () => {
      sut = await factory();
    });
    const decide = (producer: string, spec: Parameters<typeof rule>[0] | ReturnType<typeof rule>, sizes: number[], at: number) =>
      sut.store.decide({ producer, rule: 'fingerprint' in spec ? spec : rule(spec), sizes, now: T0 + at });

    describe('when five messages arrive at once with T = 100 ms and queue 2 (the worked example)', () => {
      it('releases at 0, 100, 200 and refuses the last two with notBefore 100 and 200', async () => {
        const result = await decide('p', { rate: '10/s', queue: 2 }, ones(5), 0);
        expect(result.now).toBe(T0);
        expect(brief(result.decisions)).toEqual(['+0', '+100', '+200', 'x+100 rate', 'x+200 rate']);
      });
    });

    describe('when a burst arrives under a fractional interval (3/s, T = 333.33 ms)', () => {
      it('releases one per T exactly, rounded up to whole ms, without drift', async () => {
        const result = await decide('p', { rate: '3/s', queue: '1m' }, ones(30), 0);
        expect(brief(result.decisions)).toEqual(Array.from({ length: 30 }, (_, i) => `+${Math.ceil((i * 1000) / 3)}`));
        const later = await decide('p', { rate: '3/s', queue: '1m' }, ones(1), 0);
        expect(brief(later.decisions)).toEqual(['+10000']);
      });
    });

    describe('when the queue is a count or a duration', () => {
      it('admits while R - now <= queue × T (count)', async () => {
        const result = await decide('p', { rate: '10/s', queue: 5 }, ones(8), 0);
        expect(brief(result.decisions)).toEqual(['+0', '+100', '+200', '+300', '+400', '+500', 'x+100 rate', 'x+200 rate']);
      });

      it('admits while R - now <= the duration', async () => {
        const result = await decide('p', { rate: '10/s', queue: '450ms' }, ones(6), 0);
        expect(brief(result.decisions)).toEqual(['+0', '+100', '+200', '+300', '+400', 'x+50 rate']);
      });
    });

    describe('when refusals pile up over several calls', () => {
      it('spreads their notBefore one T apart along the tail', async () => {
        const spec = rule({ rate: '10/s', queue: 1 });
        const first = await decide('p', spec, ones(3), 0);
        const second = await decide('p', spec, ones(2), 10);
        expect(brief(first.decisions)).toEqual(['+0', '+100', 'x+100 rate']);
        expect(brief(second.decisions)).toEqual(['x+200 rate', 'x+300 rate']);
      });
    });

    describe('when a flood of refusals ran the tail far ahead', () => {
      it('spreads a refusal at most an hour past its own instant; those beyond come back together at the horizon', async () => {
        const spec = rule({ rate: '1/s', queue: 0 });
        const flood = await decide('p', spec, ones(5000), 0);
        const ats = flood.decisions.map((d) => d.at - T0);
        expect(Math.max(...ats)).toBeLessThanOrEqual(1000 + 3_600_000);
        expect(ats.slice(1, 4)).toEqual([1000, 2000, 3000]); // spread one T apart below the horizon
        // A minute later: the first two are admitted (refusals charge nothing; the producer is
        // backlogged, so the slot a second ago is taken too), the third is refused within the
        // horizon of its own instant, not behind the whole flood (5,000 s ahead).
        const later = await decide('p', spec, ones(3), 60_000);
        expect(brief(later.decisions).slice(0, 2)).toEqual(['+59000', '+60000']);
        expect(later.decisions[2].admitted).toBe(false);
        expect(later.decisions[2].at - T0).toBeLessThanOrEqual(61_000 + 3_600_000);
      });
    });

    describe('when the queue is 0 (strict spacing)', () => {
      it('admits one per T and refuses anything closer', async () => {
        const spec = rule({ rate: '10/s', queue: 0 });
        expect(brief((await decide('p', spec, ones(2), 0)).decisions)).toEqual(['+0', 'x+100 rate']);
        expect(brief((await decide('p', spec, ones(1), 99)).decisions)).toEqual(['x+200 rate']);
        expect(brief((await decide('p', spec, ones(1), 100)).decisions)).toEqual(['+100']);
      });
    });

    describe('when a backlogged producer (refusals outstanding) left slots free, as a stall does', () => {
      it('gives its next message the first free slot of the last second, whether it is new or a retry', async () => {
        const spec = rule({ rate: '10/s', queue: 0 });
        expect(brief((await decide('p', spec, ones(3), 0)).decisions)).toEqual(['+0', 'x+100 rate', 'x+200 rate']);
        // Nothing came at 100 and 200 (the process stalled); at 250 a new message takes 100, the next 200.
        expect(brief((await decide('p', spec, ones(3), 250)).decisions)).toEqual(['+100', '+200', 'x+300 rate']);
        const retry = await sut.store.decide({ producer: 'p', rule: spec, sizes: ones(1), now: T0 + 300, asOf: T0 + 300 });
        expect(brief(retry.decisions)).toEqual(['+300']);
      });

      it('takes back at most a second, and nothing for a producer with nothing refused', async () => {
        const spec = rule({ rate: '10/s', queue: 0 });
        expect(brief((await decide('flood', spec, ones(60), 0)).decisions).slice(0, 2)).toEqual(['+0', 'x+100 rate']);
        expect(brief((await decide('flood', spec, ones(1), 3000)).decisions)).toEqual(['+2000']);
        const idle = rule({ rate: '10/s', queue: 0, limits: ['100/m log'] }); // the window keeps the key
        expect(brief((await decide('idle', idle, ones(1), 0)).decisions)).toEqual(['+0']);
        expect(brief((await decide('idle', idle, ones(1), 250)).decisions)).toEqual(['+250']);
      });
    });

    describe('when a rule has a message and a byte bucket', () => {
      it('releases each message after both buckets, never closer than T', async () => {
        const spec = rule({ rate: '10/s', queue: '10s', bytes: '1000B/s' });
        const result = await decide('p', spec, [50, 300, 50, 50, 1000, 10], 0);
        expect(brief(result.decisions)).toEqual(['+0', '+100', '+400', '+500', '+600', '+1600']);
      });

      it('names bytes when the byte bucket refuses, and spreads by the size', async () => {
        const spec = rule({ rate: '10/s', queue: '1s', bytes: '1000B/s' });
        const result = await decide('p', spec, [1000, 600, 200, 300], 0);
        expect(brief(result.decisions)).toEqual(['+0', '+1000', 'x+600 bytes', 'x+800 bytes']);
      });
    });

    describe('when a token bucket is used', () => {
      it('admits a burst at once, refuses the rest spread, and refills at the rate', async () => {
        const spec = rule({ algorithm: 'token-bucket', rate: '10/s', burst: 5 });
        const burst = await decide('p', spec, ones(7), 0);
        expect(brief(burst.decisions)).toEqual(['+0', '+0', '+0', '+0', '+0', 'x+100 rate', 'x+200 rate']);
        const refill = await decide('p', spec, ones(3), 250);
        expect(brief(refill.decisions)).toEqual(['+250', '+250', 'x+300 rate']);
      });
    });

    describe('when the rule changes while a producer is far behind', () => {
      it('clamps the bucket to what the new rule can produce and restarts the tail', async () => {
        const slow = rule({ rate: '1/h', queue: '1d' });
        await decide('p', slow, ones(10), 0);
        const overload = await decide('p', rule({ rate: '1/h', queue: 0 }), ones(1), 0);
        expect(overload.decisions[0].admitted).toBe(false);
        const fast = rule({ rate: '10/s', queue: '1s' });
        expect(brief((await decide('p', fast, ones(2), 0)).decisions)).toEqual(['x+100 rate', 'x+200 rate']);
        expect(brief((await decide('p', fast, ones(1), 1000)).decisions)).toEqual(['+1100']);
      });
    });

    describe('when the clock goes back an hour', () => {
      it('never parks the producer for the hour', async () => {
        const spec = rule({ rate: '10/s', queue: '1s' });
        await decide('p', spec, ones(5), 3_600_000);
        expect(brief((await decide('p', spec, ones(1), 0)).decisions)).toEqual(['x+100 rate']);
      });
    });

    describe('when a retry is decided as of an earlier instant (its turn, a little late)', () => {
      const asOf = (producer: string, spec: ReturnType<typeof rule>, sizes: number[], at: number, turn: number) =>
        sut.store.decide({ producer, rule: spec, sizes, now: T0 + at, asOf: T0 + turn });

      it('takes back no reservation made since: a full queue stays full for the next message', async () => {
        const spec = rule({ rate: '10/s', queue: 2 });
        expect(brief((await decide('p', spec, ones(3), 1000)).decisions)).toEqual(['+1000', '+1100', '+1200']);
        const late = await asOf('p', spec, ones(1), 1000, 200);
        expect(late.now).toBe(T0 + 1000);
        expect(brief(late.decisions)).toEqual(['x+1100 rate']);
        expect(brief((await decide('p', spec, ones(1), 1000)).decisions)).toEqual(['x+1200 rate']);
      });

      it('releases on the turn when the bucket was free then, and the next message follows one interval later', async () => {
        const spec = rule({ rate: '10/s', queue: 2, limits: ['100/m log'] }); // the window keeps the key
        expect(brief((await decide('p', spec, ones(1), 500)).decisions)).toEqual(['+500']);
        expect(brief((await asOf('p', spec, ones(2), 1000, 700)).decisions)).toEqual(['+700', '+800']);
        expect(brief((await decide('p', spec, ones(1), 1000)).decisions)).toEqual(['+1000']);
      });

      it('takes a slot the bucket left free between its turn and now (queue 0: strict spacing)', async () => {
        const spec = rule({ rate: '10/s', queue: 0, limits: ['100/m log'] }); // the window keeps the key
        expect(brief((await decide('p', spec, ones(1), 800)).decisions)).toEqual(['+800']);
        expect(brief((await asOf('p', spec, ones(2), 1000, 700)).decisions)).toEqual(['+900', '+1000']);
        expect(brief((await decide('p', spec, ones(1), 1000)).decisions)).toEqual(['x+1100 rate']);
      });

      it('admits by the token bucket as of the turn too, without moving its state back', async () => {
        const spec = rule({ algorithm: 'token-bucket', rate: '10/s', burst: 2 });
        expect(brief((await decide('p', spec, ones(2), 1000)).decisions)).toEqual(['+1000', '+1000']);
        expect(brief((await asOf('p', spec, ones(1), 1000, 200)).decisions)).toEqual(['x+1100 rate']);
        expect(brief((await decide('p', spec, ones(1), 1000)).decisions)).toEqual(['x+1200 rate']);
      });
    });

    describe('when slots are leased (docs/design.md "Leased slots")', () => {
      // Redis counts a key's TTL down in real time while these calls keep T0: a rule of 1/s keeps the
      // bucket's state for seconds between calls (at 1000/s a lease of 3 slots lived 3 ms, and a slow
      // machine saw it gone before the next call)
      const lease = (producer: string, spec: Parameters<typeof rule>[0], sizes: number[], at: number, wanted: number) =>
        sut.store.decide({ producer, rule: rule(spec), sizes, now: T0 + at, lease: wanted });

      it('grants them after the messages of a producer far below its rule, charged: the next message comes after them', async () => {
        const first = await lease('p', { rate: '1/s', queue: 10 }, ones(1), 0, 2);
        expect(brief(first.decisions)).toEqual(['+0']);
        expect(first.lease).toEqual({ start: T0 + 1000, count: 2 });
        const next = await decide('p', { rate: '1/s', queue: 10 }, ones(1), 50);
        expect(brief(next.decisions)).toEqual(['+3000']);
      });

      it('grants a renewal without messages from now on an empty bucket', async () => {
        const renewal = await lease('p', { rate: '1/s', queue: 10 }, [], 0, 3);
        expect(renewal).toEqual({ now: T0, decisions: [], lease: { start: T0, count: 3 } });
        expect(brief((await decide('p', { rate: '1/s', queue: 10 }, ones(1), 0)).decisions)).toEqual(['+3000']);
      });

      it('grants none when the bucket holds more than one interval beyond now, or anything was refused', async () => {
        const queued = await lease('p', { rate: '10/s', queue: 10 }, ones(3), 0, 2);
        expect(brief(queued.decisions)).toEqual(['+0', '+100', '+200']);
        expect(queued.lease).toBeUndefined();
        const refused = await lease('q', { rate: '1/s', queue: 0 }, ones(2), 0, 2);
        expect(brief(refused.decisions)).toEqual(['+0', 'x+1000 rate']);
        expect(refused.lease).toBeUndefined();
        expect((await lease('q', { rate: '1/s', queue: 0 }, [], 1500, 1)).lease).toBeUndefined();
      });

      // Above 1,000/s a fetch's messages of a producer far below its rule span less than one
      // millisecond: they all leave at once, and the lease follows them.
      it('grants them after messages that leave within LEASE_AT_ONCE_MS of now under a rule faster than that, none past it', async () => {
        const fast = await lease('f', { rate: '100000/s', queue: '1s' }, ones(50), 0, 3);
        expect(brief(fast.decisions)).toEqual(['+0', ...Array(49).fill('+1')]); // 0.01 ms apart, rounded up
        expect(fast.lease).toEqual({ start: T0 + 1, count: 3 });
        const more = await lease('g', { rate: '100000/s', queue: '1s' }, ones(101), 0, 3);
        expect(more.lease).toBeUndefined();
      });

      it('grants none to a rule with a byte bucket, a window or a token bucket', async () => {
        expect((await lease('b', { rate: '10/s', bytes: '1MiB/s', queue: 10 }, ones(1), 0, 1)).lease).toBeUndefined();
        expect((await lease('w', { rate: '10/s', limits: ['1000/h'], queue: 10 }, ones(1), 0, 1)).lease).toBeUndefined();
        expect((await lease('t', { algorithm: 'token-bucket', rate: '10/s', burst: 5 }, ones(1), 0, 1)).lease).toBeUndefined();
      });
    });

    describe('when a producer is idle', () => {
      it('forgets its state once its bucket is empty and its windows are over', async () => {
        const spec = rule({ rate: '10/s', queue: '1s', limits: ['5/m log'] });
        await decide('p', spec, ones(3), 0);
        // Redis counts the TTL down in real time: allow a slow machine a second between calls
        expect(await sut.forgetsAfter('p', T0)).toBeGreaterThan(59_000);
        expect(await sut.forgetsAfter('p', T0)).toBeLessThanOrEqual(60_000);
        await decide('q', rule({ rate: '1/s', queue: '10s' }), ones(3), 0);
        expect(await sut.forgetsAfter('q', T0)).toBeGreaterThan(2000);
        expect(await sut.forgetsAfter('q', T0)).toBeLessThanOrEqual(3000);
      });
    });

    describe('when several producers share a store', () => {
      it('keeps each one to its own bucket', async () => {
        const spec = rule({ rate: '10/s', queue: 0 });
        await decide('a', spec, ones(5), 0);
        expect(brief((await decide('b', spec, ones(1), 0)).decisions)).toEqual(['+0']);
        expect(brief((await decide('a', spec, ones(1), 0)).decisions)).toEqual(['x+500 rate']);
      });
    });

    describe('when producer ids are long, contain braces or are hostile', () => {
      const ids = ['{a}', '%7Ba%7D', 'a}{b', '}', '{', '', ' ', 'line\nbreak', 'ünï©ødé-🚦', '#hash', 'x'.repeat(5000), `${'x'.repeat(4999)}y`, 'x'.repeat(96), 'x'.repeat(97)];

      it('gives each id a bucket of its own', async () => {
        // a slow rate, so Redis (which expires on its own clock) keeps every bucket through both loops
        const spec = rule({ rate: '1/m', queue: 0 });
        for (const id of ids) expect(brief((await decide(id, spec, ones(1), 0)).decisions)).toEqual(['+0']);
        for (const id of ids) expect(brief((await decide(id, spec, ones(1), 0)).decisions)).toEqual(['x+60000 rate']);
      });
    });

    describeWindowContract(() => sut);
    describeRuleContract(() => sut);
  });
};
