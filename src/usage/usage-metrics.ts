/**
 * withUsage: a Metrics that also feeds the usage recorder, so the flow reports once and both the
 * Prometheus metrics and the per-producer usage history see it. Outcomes forwarded, delayed,
 * overflowed and dead_lettered are counted; shadow outcomes are not (the message is forwarded
 * and counted as such).
 */
import type { Metrics, Outcome } from '../metrics/types';
import type { UsageCounter } from './usage-counters';
import type { UsageRecorder } from './usage-recorder';

const COUNTER_OF: Partial<Record<Outcome, UsageCounter>> = {
  forwarded: 'forwarded',
  delayed: 'delayed',
  overflowed: 'overflowed',
  dead_lettered: 'deadLettered',
};

export const withUsage = (metrics: Metrics, recorder: Pick<UsageRecorder, 'count'>): Metrics => ({
  ...metrics,
  message(outcome, producer, count = 1) {
    metrics.message(outcome, producer, count);
    const counter = COUNTER_OF[outcome];
    if (counter) recorder.count(producer, counter, count);
  },
  offered(producer, count) {
    metrics.offered?.(producer, count);
    recorder.count(producer, 'offered', count);
  },
  forwardedBytes(producer, bytes) {
    metrics.forwardedBytes?.(producer, bytes);
    recorder.count(producer, 'forwarded', 0, bytes);
  },
});
