/**
 * The Grafana dashboard of the chart (helm/sluice/dashboards/sluice.json): it parses, every
 * metric it queries is one sluice serves on /metrics after a short run, and the chart ships it
 * as a ConfigMap for the Grafana sidecar only when dashboard.enabled is set.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createLagCollector } from '../../../src/metrics/lag-collector';
import { createPromMetrics } from '../../../src/metrics/prom-metrics';
import { chartDir, render, type Manifest } from './helm-binary';

const file = join(chartDir, 'dashboards/sluice.json');

interface Panel {
  title: string;
  targets: Array<{ expr: string }>;
}
const dashboard = JSON.parse(readFileSync(file, 'utf8')) as { uid: string; panels: Panel[]; templating: { list: Array<{ query: unknown }> } };

const queries = (): string[] => [
  ...dashboard.panels.flatMap((panel) => panel.targets.map((target) => target.expr)),
  ...dashboard.templating.list.map((variable) => JSON.stringify(variable.query)),
];

/** /metrics of a replica after a short run: every Metrics call made once, one lag round. */
const metricsText = async (): Promise<string> => {
  const metrics = createPromMetrics();
  metrics.message('forwarded', 'billing');
  metrics.releaseDelay(120);
  metrics.storeError();
  metrics.fallbackActive(true);
  metrics.held(3, 300);
  const admin = {
    fetchTopicOffsets: async () => [{ partition: 0, offset: '10', high: '10', low: '0' }],
    fetchOffsets: async ({ topics }: { topics: string[] }) => topics.map((topic) => ({ topic, partitions: [{ partition: 0, offset: '4' }] })),
  };
  const lag = createLagCollector({
    admin,
    registry: metrics.registry,
    groups: [
      { groupId: 'sluice.events', topics: ['events'] },
      { groupId: 'sluice.events.retry', topics: ['events.retry.5s'], retryTiers: true },
    ],
  });
  await lag.collect();
  return metrics.registry.metrics();
};

describe('the Grafana dashboard', () => {
  it('is a dashboard with panels that each query something', () => {
    expect(dashboard.uid).toBe('sluice');
    expect(dashboard.panels.length).toBeGreaterThanOrEqual(7);
    for (const panel of dashboard.panels) expect(panel.targets.length).toBeGreaterThan(0);
  });

  it('covers forwarded vs offered, outcomes, release delay, store errors and fallback, lag and tier depth', () => {
    const all = queries().join('\n');
    for (const name of ['sluice_producer_messages_total', 'sluice_messages_total', 'sluice_release_delay_seconds_bucket', 'sluice_store_errors_total', 'sluice_store_fallback_active', 'sluice_consumer_lag', 'sluice_retry_tier_depth']) {
      expect(all).toContain(name);
    }
  });

  it('queries only metrics that sluice serves on /metrics', async () => {
    const served = new Set([...(await metricsText()).matchAll(/^(sluice_[a-z0-9_]+)[{ ]/gm)].map((match) => match[1]));
    const queried = new Set(queries().flatMap((query) => [...query.matchAll(/\bsluice_[a-z0-9_]+/g)].map((match) => match[0])));
    expect([...queried].filter((name) => !served.has(name))).toEqual([]);
  });

  describe('in the chart', () => {
    const dashboards = (manifests: Manifest[]) => manifests.filter((m) => m.kind === 'ConfigMap' && m.metadata.name.endsWith('-dashboard'));

    it('is not rendered by default', () => {
      expect(dashboards(render('sluice'))).toEqual([]);
    });

    it('is a ConfigMap labelled for the Grafana sidecar when enabled, holding the dashboard as it is', () => {
      const [configMap] = dashboards(render('orders', ['--set', 'dashboard.enabled=true', '--set', 'dashboard.annotations.grafana_folder=sluice']));
      expect(configMap.metadata.labels).toMatchObject({ grafana_dashboard: '1', 'app.kubernetes.io/instance': 'orders' });
      expect((configMap.metadata as { annotations?: Record<string, string> }).annotations).toEqual({ grafana_folder: 'sluice' });
      expect(JSON.parse(configMap.data!['sluice.json'])).toEqual(dashboard);
    });

    it('takes the label and namespace the sidecar is set up for', () => {
      const [configMap] = dashboards(render('orders', ['--set', 'dashboard.enabled=true', '--set', 'dashboard.namespace=monitoring', '--set', 'dashboard.labels.grafana_dashboard=sluice']));
      expect((configMap.metadata as { namespace?: string }).namespace).toBe('monitoring');
      expect(configMap.metadata.labels).toMatchObject({ grafana_dashboard: 'sluice' });
    });
  });
});
