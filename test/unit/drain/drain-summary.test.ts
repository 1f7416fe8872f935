import { createDrainSummary, formatSummary } from '../../../src/drain/drain-summary';
import { dryRunColumn } from '../../../src/drain/drain-dry-run';
import { prepareForDrain } from '../../../src/drain/drain-command';
import type { RetryItem } from '../../../src/drain/retry-item';
import { buildTiers } from '../../../src/park/tiers';

describe('when a drain ends', () => {
  it('prints one aligned row per producer and a total row', () => {
    const summary = createDrainSummary();
    summary.add('billing', 'forwarded');
    summary.add('billing', 'forwarded');
    summary.add('batch-7', 'deadLettered');
    summary.add('billing', 'reparked');
    expect(formatSummary(summary, { dryRun: false })).toBe(
      [
        'producer  forwarded  re-parked  dead-lettered',
        '--------  ---------  ---------  -------------',
        'batch-7           0          0              1',
        'billing           2          1              0',
        '--------  ---------  ---------  -------------',
        'total             2          1              1',
        '',
      ].join('\n'),
    );
  });

  it('shows "to decide again" instead of re-parked in a dry run', () => {
    const summary = createDrainSummary();
    summary.add('p', 'toDecide');
    expect(formatSummary(summary, { dryRun: true })).toContain('to decide again');
  });
});

const now = 1_000_000;
const policy = { tiers: buildTiers('r', [1000]), holdMaxMs: 1000, maxAttempts: 3, maxAgeMs: 60_000 };
const item = (reason: RetryItem['info']['reason'], change: Partial<RetryItem['info']> = {}): RetryItem => ({
  topic: 'r.1s',
  partition: 0,
  offset: '0',
  size: 1,
  content: { key: null, value: null, headers: {} },
  info: { producer: 'p', attempt: 1, notBefore: now + 50_000, firstSeen: now, timestamp: '1', origin: { topic: 'in', partition: 0, offset: '0' }, reason, ...change },
});

describe('when a drain is a dry run', () => {
  it('counts a delayed message as forwarded at its not-before and an overflow one as to decide again', () => {
    expect(dryRunColumn(item({ kind: 'delayed' }), now, policy, 100)).toBe('forwarded');
    expect(dryRunColumn(item({ kind: 'overflow', limit: 'rate' }), now, policy, 100)).toBe('toDecide');
    expect(dryRunColumn(item({ kind: 'overflow', limit: 'rate' }, { attempt: 3 }), now, policy, 100)).toBe('deadLettered');
  });
});

describe('when messages are prepared for a drain', () => {
  it('moves not-before to now with --ignore-delay', () => {
    const prepared = prepareForDrain({ ignoreDelay: true, dryRun: false, force: false }, false)(item({ kind: 'delayed' }), now);
    expect(prepared.info.notBefore).toBe(now);
  });

  it('decides dead-lettered messages again as new: attempts and age restart', () => {
    const prepared = prepareForDrain({ ignoreDelay: false, dryRun: false, force: false }, true)(item({ kind: 'overflow', limit: 'rate' }, { attempt: 10, firstSeen: 0 }), now);
    expect(prepared.decideAgain).toBe(true);
    expect(prepared.info).toMatchObject({ attempt: 0, firstSeen: now, notBefore: now });
  });
});
