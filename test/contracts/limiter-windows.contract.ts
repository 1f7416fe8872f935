/** Window limits at their boundaries, for every store (part of the limiter store contract). */
import { brief, rule, T0, type StoreUnderTest } from './limiter-harness';

/** A token bucket that never refuses on its own, so only the windows decide. */
const open = { algorithm: 'token-bucket' as const, rate: '1000/s', burst: 1000 };

export const describeWindowContract = (sut: () => StoreUnderTest): void => {
  const decideAt = async (spec: ReturnType<typeof rule>, at: number, k = 1, producer = 'w') =>
    brief((await sut().store.decide({ producer, rule: spec, sizes: Array.from({ length: k }, () => 1), now: T0 + at })).decisions);

  describe('when a log window is full', () => {
    it('admits again exactly W after the oldest decision in it', async () => {
      const spec = rule({ ...open, limits: ['3/s log'] });
      expect([...(await decideAt(spec, 0)), ...(await decideAt(spec, 100)), ...(await decideAt(spec, 200))]).toEqual(['+0', '+100', '+200']);
      expect(await decideAt(spec, 999)).toEqual(['x+1000 3/s log']);
      expect(await decideAt(spec, 1000)).toEqual(['+1000']);
      expect(await decideAt(spec, 1001)).toEqual(['x+1334 3/s log']); // tail: 1000 + W/N
    });
  });

  describe('when a fixed window is full', () => {
    it('admits again at the next calendar window, so up to 2N pass across a boundary', async () => {
      // Redis expires the state on its own clock, and the state written at `now` lives until
      // the window ends: a full window's last second leaves a second of real time for the next
      // call (3 ms before the end, as this case once was, made it flaky on a busy machine).
      const spec = rule({ ...open, limits: ['3/10s fixed'] });
      expect(await decideAt(spec, 9000, 3)).toEqual(['+9000', '+9000', '+9000']);
      expect(await decideAt(spec, 9999)).toEqual(['x+10000 3/10s fixed']);
      expect(await decideAt(spec, 10_000, 4)).toEqual(['+10000', '+10000', '+10000', 'x+20000 3/10s fixed']);
    });
  });

  describe('when a sliding window is full', () => {
    it('counts the whole oldest sub-window (W/10), so it admits again at the end of that sub-window plus W', async () => {
      const spec = rule({ ...open, limits: ['10/s'] });
      expect(await decideAt(spec, 1050, 10)).toEqual(Array.from({ length: 10 }, () => '+1050'));
      expect(await decideAt(spec, 2049)).toEqual(['x+2100 10/s']);
      expect(await decideAt(spec, 2100)).toEqual(['+2100']);
    });

    it('forgets sub-windows that left the window', async () => {
      const spec = rule({ ...open, limits: ['2/s'] });
      expect(await decideAt(spec, 0, 2)).toEqual(['+0', '+0']);
      expect(await decideAt(spec, 1100, 3)).toEqual(['+1100', '+1100', 'x+2200 2/s']);
    });
  });

  describe('when a window is written as an object over days', () => {
    it('counts calendar days for fixed and names the limit as written', async () => {
      const spec = rule({ ...open, limits: [{ max: 2, per: '1d', window: 'fixed' }] });
      expect(await decideAt(spec, 86_399_000, 3)).toEqual(['+86399000', '+86399000', 'x+86400000 2/1d fixed']);
      expect(await decideAt(spec, 86_400_000, 2)).toEqual(['+86400000', '+86400000']);
    });
  });
};
