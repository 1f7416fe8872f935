import { FUTURE_TOLERANCE_MS, READ_BATCH_MS, readLater, turnOf } from '../../../src/flow/gate';
import { HOP_MARGIN_MS } from '../../../src/flow/route';
import { buildTiers } from '../../../src/park/tiers';

const [s5, m1] = buildTiers('r', [5000, 60_000]);
const now = 1_000_000;

describe('when a tier message may be taken', () => {
  it('is when its tier delay is over, if that comes before its not-before is within the read-ahead', () => {
    expect(turnOf({ tier: s5, parkedAt: now, notBefore: now + 60_000 }, now, 5000)).toBe(now + 5000);
  });

  it('is when its not-before is within the read-ahead, if that comes before its tier delay is over', () => {
    expect(turnOf({ tier: m1, parkedAt: now, notBefore: now + 20_000 }, now, 5000)).toBe(now + 15_000);
  });

  it('is the earlier of the two, which may already be past', () => {
    expect(turnOf({ tier: m1, parkedAt: now - 60_000, notBefore: now + 30_000 }, now, 5000)).toBe(now);
    expect(turnOf({ tier: m1, parkedAt: now - 1000, notBefore: now + 2000 }, now, 5000)).toBe(now - 3000);
    expect(turnOf({ tier: m1, parkedAt: now, notBefore: now + 60_000 }, now, 0)).toBe(now + 60_000);
  });

  it('is at most the tier delay + FUTURE_TOLERANCE_MS away for a record whose timestamp is in the future (it holds its partition no longer than a fresh park)', () => {
    expect(turnOf({ tier: m1, parkedAt: now + 86_400_000 * 30, notBefore: now + 86_400_000 * 60 }, now, 5000)).toBe(now + FUTURE_TOLERANCE_MS + 60_000);
    expect(turnOf({ tier: m1, parkedAt: now + FUTURE_TOLERANCE_MS, notBefore: now + 3_600_000 }, now, 5000)).toBe(now + FUTURE_TOLERANCE_MS + 60_000);
    expect(turnOf({ tier: s5, parkedAt: now + 500, notBefore: now + 3_600_000 }, now, 5000)).toBe(now + 5500);
  });

  it('is when the tier delay is over for a malformed record (no not-before to read ahead of)', () => {
    expect(turnOf({ tier: m1, parkedAt: now - 1000 }, now, 5000)).toBe(now + 59_000);
  });
});

describe('what a read of a tier partition takes', () => {
  it('takes a message whose not-before is within the read-ahead plus READ_BATCH_MS, though its turn is later', () => {
    expect(readLater({ tier: m1, parkedAt: now, notBefore: now + 5000 + READ_BATCH_MS }, now, 5000)).toBeUndefined();
    expect(readLater({ tier: m1, parkedAt: now, notBefore: now + 5000 }, now, 5000)).toBeUndefined();
  });

  it('leaves one due later until its turn, when its partition is read again', () => {
    expect(readLater({ tier: m1, parkedAt: now, notBefore: now + 5001 + READ_BATCH_MS }, now, 5000)).toBe(now + 1 + READ_BATCH_MS);
  });

  it('takes no message before its tier delay is over unless its not-before is near (a hop is never made early)', () => {
    expect(readLater({ tier: s5, parkedAt: now - 4999, notBefore: now + 60_000 }, now, 5000)).toBe(now + 1);
    expect(readLater({ tier: m1, parkedAt: now - 1000 }, now, 5000)).toBe(now + 59_000);
  });

  it('is a batch small enough that what it takes early is held in memory, not hopped', () => {
    expect(READ_BATCH_MS).toBeLessThanOrEqual(HOP_MARGIN_MS);
  });
});
