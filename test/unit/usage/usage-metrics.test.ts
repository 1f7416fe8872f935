import { noMetrics, type Metrics } from '../../../src/metrics/types';
import { withUsage } from '../../../src/usage/usage-metrics';

const recording = () => {
  const counts: Array<[string, string, number, number]> = [];
  return { counts, count: (producer: string, counter: string, n = 1, bytes = 0) => void counts.push([producer, counter, n, bytes]) };
};

describe('withUsage', () => {
  it('passes every call on to the metrics it wraps', () => {
    const inner = { ...noMetrics, message: jest.fn(), storeError: jest.fn(), offered: jest.fn(), forwardedBytes: jest.fn() } satisfies Metrics;
    const metrics = withUsage(inner, recording());
    metrics.message('forwarded', 'a', 2);
    metrics.storeError();
    metrics.offered!('a', 3);
    metrics.forwardedBytes!('a', 30);
    expect(inner.message).toHaveBeenCalledWith('forwarded', 'a', 2);
    expect(inner.storeError).toHaveBeenCalled();
    expect(inner.offered).toHaveBeenCalledWith('a', 3);
    expect(inner.forwardedBytes).toHaveBeenCalledWith('a', 30);
  });

  it('maps the outcomes to usage counters and leaves the shadow outcomes out', () => {
    const recorder = recording();
    const metrics = withUsage(noMetrics, recorder);
    metrics.message('forwarded', 'a');
    metrics.message('delayed', 'a', 2);
    metrics.message('overflowed', 'b', 3);
    metrics.message('dead_lettered', 'b', 4);
    metrics.message('shadow_delayed', 'c');
    metrics.message('shadow_overflowed', 'c');
    metrics.offered!('a', 5);
    metrics.forwardedBytes!('a', 512);
    expect(recorder.counts).toEqual([
      ['a', 'forwarded', 1, 0],
      ['a', 'delayed', 2, 0],
      ['b', 'overflowed', 3, 0],
      ['b', 'deadLettered', 4, 0],
      ['a', 'offered', 5, 0],
      ['a', 'forwarded', 0, 512],
    ]);
  });
});
