import { usageLines } from '../../../scripts/demo/demo-table';
import type { UsageAnswer } from '../../../src/usage';
import { zeroCounts } from '../../../src/usage/usage-counters';

const answer = (producer: string, forwarded: number[], totals: Partial<ReturnType<typeof zeroCounts>>): UsageAnswer => ({
  producer,
  resolution: '1s',
  since: `${forwarded.length}s`,
  rows: forwarded.map((f, i) => ({ ...zeroCounts(), startMs: i * 1000, start: new Date(i * 1000).toISOString(), forwarded: f })),
  totals: { ...zeroCounts(), ...totals },
});

describe('the demo\'s last-minute usage table', () => {
  it('shows forwarded per second as a sparkline (idle seconds as gaps) and the minute\'s totals per producer', () => {
    const lines = usageLines([
      answer('billing', [0, 5, 10], { offered: 40, forwarded: 15, delayed: 20, overflowed: 5, deadLettered: 1 }),
      answer('checkout', [2, 2, 2], { offered: 6, forwarded: 6 }),
    ]);
    expect(lines).toHaveLength(3);
    expect(lines[1]).toMatch(/^billing {3,} ▅█ +40 +15 +20 +5 +1$/);
    expect(lines[2]).toMatch(/^checkout +███ +6 +6 +0 +0 +0$/);
  });
});
