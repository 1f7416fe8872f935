import { createPhaseMeter, SETTLE_S, verdict, type PhaseResult } from '../../../scripts/demo/budget-phases';
import type { ProducerRow } from '../../../scripts/demo/demo-table';

const row = (id: string, weight: number, share: number | undefined, offered: number, forwarded: number): ProducerRow =>
  ({ id, quota: '20/s', weight, share, demand: share, offeredPerS: 0, forwardedPerS: 0, backlogMs: 0, parked: 0, offered, forwarded } as unknown as ProducerRow);

const phase = (name: string, fromS: number, producers: PhaseResult['producers']): PhaseResult => ({ phase: { name, fromS, toS: fromS + 15 }, fromS: fromS + 5, toS: fromS + 15, inForce: 60, producers });

describe('the demo\'s budget phases', () => {
  it('measures each phase after its settling time: mean shares, and offered/forwarded per second from the counters', () => {
    const meter = createPhaseMeter([{ name: 'phase 1', fromS: 0, toS: 10 }]);
    let result: PhaseResult | undefined;
    for (let s = 0; s <= 10; s += 1) result = meter.add(s, [row('a', 2, s % 2 === 0 ? 40 : 20, s * 50, s * 30)], 60) ?? result;
    expect(result?.fromS).toBe(SETTLE_S);
    expect(result?.toS).toBe(10);
    const [a] = result?.producers ?? [];
    expect(a.offeredPerS).toBeCloseTo(50);
    expect(a.forwardedPerS).toBeCloseTo(30);
    expect(a.share).toBeCloseTo((40 + 20 + 40 + 20 + 40 + 20) / 6);
  });

  it('says which held-back producers grew once one went idle, and the weights\' effect, from the numbers given', () => {
    const m = (id: string, weight: number, share: number | undefined, offeredPerS: number, forwardedPerS: number) => ({ id, quota: '20/s', weight, share, demand: share, offeredPerS, forwardedPerS });
    const before = phase('phase 1', 0, [m('checkout', 2, 21.1, 25, 21), m('billing', 1, 10.5, 40, 10.5), m('mobile', 1, 5.4, 5, 5)]);
    const after = phase('phase 2', 15, [m('checkout', 2, undefined, 0, 0), m('billing', 1, 20, 40, 20), m('mobile', 1, 7.7, 5, 5)]);
    const lines = verdict([before, after], ['checkout']);
    expect(lines[0]).toContain('×2.0');
    expect(lines[1]).toMatch(/^verdict: shares moved after checkout went idle at 15 s/);
    expect(lines[1]).toContain('billing 10.5→20.0/s');
    expect(lines[1]).not.toContain('mobile'); // not held back: its share follows what it offers
    const flat = phase('phase 2', 15, [m('checkout', 2, undefined, 0, 0), m('billing', 1, 10.5, 40, 10.5), m('mobile', 1, 5.4, 5, 5)]);
    expect(verdict([before, flat], ['checkout'])[1]).toMatch(/^verdict: shares did not move/);
  });
});
