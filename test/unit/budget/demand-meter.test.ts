import { BACKLOG_MS, createDemandMeter } from '../../../src/budget/demand-meter';

describe('demand meter', () => {
  it('reports messages and bytes per second over the last two cadences, and a backlog', () => {
    const meter = createDemandMeter();
    meter.record('a', 50, 5000, 1000 + BACKLOG_MS + 1);
    meter.record('b', 10, 100, 1000);
    expect(meter.take(1000, 500)).toEqual([
      { producer: 'a', rate: 100, bytes: 10_000, backlogged: true },
      { producer: 'b', rate: 20, bytes: 200, backlogged: false },
    ]);
    meter.record('a', 25, 0, 1000);
    expect(meter.take(1250, 500)).toEqual([
      { producer: 'a', rate: 150, bytes: 10_000, backlogged: false }, // its last slot (1101) is past
      { producer: 'b', rate: 20, bytes: 200, backlogged: false },
    ]);
  });

  it('reports a producer backlogged while its last slot or refusal is ahead, then stops once it decided nothing for two cadences', () => {
    const meter = createDemandMeter();
    meter.record('a', 1, 1, 400);
    meter.take(0, 500);
    expect(meter.take(250, 500)).toEqual([{ producer: 'a', rate: 2, bytes: 2, backlogged: true }]);
    expect(meter.take(500, 500)).toEqual([]);
  });
});
