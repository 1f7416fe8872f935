import { createDrainSummary, formatSummary } from '../../../src/drain/drain-summary';
import { dryRunColumn } from '../../../src/drain/drain-dry-run';
import { prepareForDrain } from '../../../src/drain/drain-command';
import type { RuleView } from '../../../src/decide/fetch-decider';
import type { FlowItem, RoutePolicy } from '../../../src/flow/flow-item';
import { buildTiers } from '../../../src/park/park';

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
const policy: RoutePolicy = { tiers: buildTiers('r', [1000]), holdMaxMs: 1000, maxAttempts: 3, maxAgeMs: 60_000, hop: true };
const rule: RuleView = {
  name: 'p', unlimited: false, shadow: false,
  limit: { algorithm: 'leaky-bucket', intervalMs: 100, capacityMs: 1000, burst: 1, windows: [], labels: { rate: '10/s' }, fingerprint: 'f' },
};
const item = (reason: FlowItem['info']['reason'], change: Partial<FlowItem['info']> = {}): FlowItem => ({
  topic: 'r.1s',
  partition: 0,
  offset: '0',
  size: 1,
  fromTier: true,
  content: { key: null, value: null, headers: [] },
  info: { producer: 'p', attempt: 1, notBefore: now + 50_000, firstSeen: now, timestamp: '1', origin: { topic: 'in', partition: 0, offset: '0' }, reason, ...change },
});

describe('when a drain is a dry run', () => {
  it('counts a delayed message as forwarded at its not-before and an overflow one as to decide again', () => {
    expect(dryRunColumn(item({ kind: 'delayed' }), now, policy, rule)).toBe('forwarded');
    expect(dryRunColumn(item({ kind: 'overflow', limit: 'rate' }), now, policy, rule)).toBe('toDecide');
    expect(dryRunColumn(item({ kind: 'overflow', limit: 'rate' }, { attempt: 3 }), now, policy, rule)).toBe('deadLettered');
  });

  it('counts a delayed message far ahead as forwarded: judged at its not-before, not hopped (dead-lettered when that is past maxAge)', () => {
    expect(dryRunColumn(item({ kind: 'delayed' }, { notBefore: now + 55_000 }), now, policy, rule)).toBe('forwarded');
    expect(dryRunColumn(item({ kind: 'delayed' }, { notBefore: now + 600_000 }), now, policy, rule)).toBe('deadLettered');
  });

  it('counts a malformed or redriven message as to decide again (judged now), or dead-lettered past its limits', () => {
    expect(dryRunColumn({ ...item({ kind: 'delayed' }), malformed: ['sluice-attempt: missing'] }, now, policy, rule)).toBe('toDecide');
    expect(dryRunColumn({ ...item({ kind: 'delayed' }), decideAgain: true }, now, policy, rule)).toBe('toDecide');
    expect(dryRunColumn({ ...item({ kind: 'delayed' }, { firstSeen: now - 60_001 }), decideAgain: true }, now, policy, rule)).toBe('deadLettered');
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
