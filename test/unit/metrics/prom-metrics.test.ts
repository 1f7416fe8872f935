import { Registry } from 'prom-client';
import { createPromMetrics } from '../../../src/metrics/prom-metrics';

const sample = async (registry: Registry, name: string, labels: Record<string, string> = {}): Promise<number | undefined> => {
  const metric = registry.getSingleMetric(name);
  if (!metric) throw new Error(`no metric ${name}`);
  const { values } = await metric.get();
  const hit = values.find((v) => Object.entries(labels).every(([k, want]) => String(v.labels[k]) === want));
  return hit?.value;
};

const producerSeries = async (registry: Registry): Promise<Array<{ producer: string; outcome: string; value: number }>> => {
  const { values } = await registry.getSingleMetric('sluice_producer_messages_total')!.get();
  return values.map((v) => ({ producer: String(v.labels.producer), outcome: String(v.labels.outcome), value: v.value }));
};

describe('prometheus metrics', () => {
  describe('when messages reach outcomes', () => {
    it('counts them by outcome and by producer', async () => {
      const metrics = createPromMetrics();
      metrics.message('forwarded', 'billing', 3);
      metrics.message('overflowed', 'billing');
      metrics.message('dead_lettered', 'reports', 2);
      expect(await sample(metrics.registry, 'sluice_messages_total', { outcome: 'forwarded' })).toBe(3);
      expect(await sample(metrics.registry, 'sluice_messages_total', { outcome: 'overflowed' })).toBe(1);
      expect(await sample(metrics.registry, 'sluice_producer_messages_total', { producer: 'reports', outcome: 'dead_lettered' })).toBe(2);
    });

    it('exposes every outcome of the contract from the start, at zero', async () => {
      const text = await createPromMetrics().registry.metrics();
      for (const outcome of ['forwarded', 'delayed', 'overflowed', 'dead_lettered', 'shadow_delayed', 'shadow_overflowed']) {
        expect(text).toContain(`sluice_messages_total{outcome="${outcome}"} 0`);
      }
    });
  });

  describe('when a million producer ids send messages', () => {
    it('keeps at most the top N plus other as series, and the sum over producers equals the total', async () => {
      const metrics = createPromMetrics({ topProducers: 10 });
      for (let i = 0; i < 1_000_000; i += 1) {
        metrics.message('forwarded', `producer-${i}`);
        if (i % 50 === 0) metrics.message('forwarded', `heavy-${i % 3}`, 5);
      }
      const series = await producerSeries(metrics.registry);
      expect(new Set(series.map((s) => s.producer)).size).toBeLessThanOrEqual(11);
      expect(series.map((s) => s.producer)).toEqual(expect.arrayContaining(['heavy-0', 'heavy-1', 'heavy-2', 'other']));
      const sum = series.reduce((total, s) => total + s.value, 0);
      expect(sum).toBe(await sample(metrics.registry, 'sluice_messages_total', { outcome: 'forwarded' }));
    });
  });

  describe('when a producer loses its label', () => {
    it('moves its counts into other so no sum goes down', async () => {
      const metrics = createPromMetrics({ topProducers: 1 });
      metrics.message('delayed', 'small', 2);
      metrics.message('forwarded', 'small', 1);
      for (let i = 0; i < 5; i += 1) metrics.message('forwarded', 'big', 1);
      const series = await producerSeries(metrics.registry);
      expect(series.filter((s) => s.producer === 'small')).toEqual([]);
      expect(series).toEqual(
        expect.arrayContaining([
          { producer: 'other', outcome: 'delayed', value: 2 },
          { producer: 'big', outcome: 'forwarded', value: expect.any(Number) },
        ]),
      );
      expect(series.filter((s) => s.outcome === 'forwarded').reduce((t, s) => t + s.value, 0)).toBe(6);
    });

    it('moves what earlier scrapes showed of it into other too, and counts it anew when it is labelled again', async () => {
      const metrics = createPromMetrics({ topProducers: 1 });
      const forwarded = async (): Promise<Record<string, number>> =>
        Object.fromEntries((await producerSeries(metrics.registry)).filter((s) => s.outcome === 'forwarded').map((s) => [s.producer, s.value]));
      metrics.message('forwarded', 'small', 2);
      expect(await forwarded()).toEqual({ small: 2 });
      // big's first two count as other (no more than small's 2 yet), its third takes small's label.
      for (let i = 0; i < 3; i += 1) metrics.message('forwarded', 'big', 1);
      expect(await forwarded()).toEqual({ big: 1, other: 4 });
      for (let i = 0; i < 5; i += 1) metrics.message('forwarded', 'small', 1);
      // small's first again as other (the sketch's 3, big's 3), then it takes the label back: big's 1 shown before moves into other.
      expect(await forwarded()).toEqual({ small: 4, other: 6 });
      expect(await sample(metrics.registry, 'sluice_messages_total', { outcome: 'forwarded' })).toBe(10);
    });
  });

  describe('when the pipeline reports its state', () => {
    it('records release delay in seconds, store errors, fallback, held, headers, reloads and crashes', async () => {
      const metrics = createPromMetrics();
      metrics.releaseDelay(1500);
      metrics.storeError();
      metrics.storeError();
      metrics.fallbackActive(true);
      metrics.held(7, 7000);
      metrics.forgedHeadersDropped(4);
      metrics.malformedRetryHeaders(1);
      metrics.quotaReload('error');
      metrics.consumerCrash('sluice.events', false);
      const r = metrics.registry;
      expect(await sample(r, 'sluice_release_delay_seconds', { le: '1' })).toBe(0);
      expect(await sample(r, 'sluice_release_delay_seconds', { le: '5' })).toBe(1);
      expect(await sample(r, 'sluice_store_errors_total')).toBe(2);
      expect(await sample(r, 'sluice_store_fallback_active')).toBe(1);
      expect(await sample(r, 'sluice_held_messages')).toBe(7);
      expect(await sample(r, 'sluice_held_bytes')).toBe(7000);
      expect(await sample(r, 'sluice_forged_headers_dropped_total')).toBe(4);
      expect(await sample(r, 'sluice_malformed_retry_headers_total')).toBe(1);
      expect(await sample(r, 'sluice_quota_reloads_total', { result: 'error' })).toBe(1);
      expect(await sample(r, 'sluice_quota_reloads_total', { result: 'ok' })).toBe(0);
      expect(await sample(r, 'sluice_consumer_crashes_total', { group: 'sluice.events', restart: 'false' })).toBe(1);
      metrics.fallbackActive(false);
      expect(await sample(r, 'sluice_store_fallback_active')).toBe(0);
    });

    it('counts late releases heard and not believed by reason, every reason at zero from the start', async () => {
      const metrics = createPromMetrics();
      expect(await sample(metrics.registry, 'sluice_late_releases_ignored_total', { reason: 'sent' })).toBe(0);
      metrics.lateReleasesIgnored?.('sent', 3);
      metrics.lateReleasesIgnored?.('size', 1);
      expect(await sample(metrics.registry, 'sluice_late_releases_ignored_total', { reason: 'sent' })).toBe(3);
      expect(await sample(metrics.registry, 'sluice_late_releases_ignored_total', { reason: 'size' })).toBe(1);
      expect(await sample(metrics.registry, 'sluice_late_releases_ignored_total', { reason: 'slot' })).toBe(0);
    });

    it('names every metric with the sluice_ prefix', async () => {
      const metrics = createPromMetrics();
      expect(metrics.registry.getMetricsAsArray().every((m) => m.name.startsWith('sluice_'))).toBe(true);
    });
  });
});

describe('with process metrics on (sluice run)', () => {
  it('exposes the event loop delay and the process CPU, prefixed sluice_', async () => {
    const text = await createPromMetrics({ processMetrics: true }).registry.metrics();
    expect(text).toMatch(/^sluice_nodejs_eventloop_lag_p99_seconds /m);
    expect(text).toMatch(/^sluice_process_cpu_seconds_total /m);
    expect(await createPromMetrics().registry.metrics()).not.toMatch(/eventloop/);
  });
});
