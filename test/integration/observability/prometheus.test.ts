/**
 * The dashboard and the alerts on real parts (issue 32): a real Prometheus (Debian's
 * `prometheus` binary, on a free loopback port, a temporary config) scrapes the /metrics of two
 * real `sluice run` replicas every second and evaluates the chart's alert rules, rendered by the
 * real helm, every second, while producers offer a mixed load: `calm` within its quota, `busy`
 * at 3× (delayed, then parked on the retry tiers), `doomed` refused by a 5/h window (its wait
 * is past retry.maxAge: dead-lettered at once).
 * - every panel query of the dashboard (its variables filled in as Grafana would) returns data,
 *   and the job variable's label_values query finds the job;
 * - every alert rule is evaluated by Prometheus without error; the ones the load implies
 *   (dead-lettering, a tier growing; thresholds lowered for the test, their `for` kept) are
 *   pending with the offending producer named; the ones a healthy sidecar must not raise (store
 *   fallback, destination stuck, consumer not in its group, down) return nothing.
 * Without prometheus (and no apt-get as root to install it) the test is skipped and says so.
 */
import '../../helpers/processes';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { freePort } from '../../../scripts/services/ports';
import { canInstallWithApt, ensurePrometheusTools, findPrometheusTool } from '../../../scripts/test-steps/promtool';
import { createKafka, kafkaBrokers } from '../../helpers/kafka';
import { type Owned, spawnOwned, stopOwned } from '../../helpers/processes';
import { redisUrl } from '../../helpers/redis';
import { waitFor } from '../../helpers/wait';
import { render } from '../../unit/helm/helm-binary';
import {
  type BacklogScenario, createBacklogScenario, deleteScenarioTopics, endAllReplicas, type Offered, offerLoad, type Replica, startReplica,
} from '../retry/backlog-fixture';

const ROOT = join(__dirname, '../../..');
const JOB = 'sluice';
const LOAD_SECONDS = 30;
const LOAD = [
  { id: 'calm', perSecond: 5, seconds: LOAD_SECONDS },
  { id: 'busy', perSecond: 60, seconds: LOAD_SECONDS, keys: 4 },
  { id: 'doomed', perSecond: 10, seconds: LOAD_SECONDS },
];
const QUOTAS = 'default:\n  rate: 20/s\n  queue: 2s\nproducers:\n  doomed:\n    rate: 100/s\n    limits: ["5/h"]\n';

interface Rule {
  alert: string;
  expr: string;
}
interface RuleState {
  name: string;
  health: string;
  lastError?: string;
  alerts: Array<{ state: string; labels: Record<string, string>; annotations: Record<string, string>; value: string }>;
}
interface QueryAnswer {
  status: string;
  error?: string;
  data: { result: Array<{ metric: Record<string, string>; value: [number, string] }> };
}

const prometheusBinary = ((): { path?: string; why?: string; error?: string } => {
  try {
    const found = findPrometheusTool('prometheus');
    if (found) return { path: found };
    if (canInstallWithApt()) return { path: ensurePrometheusTools((line) => process.stderr.write(`${line}\n`)).prometheus };
    return { why: "prometheus is not installed and apt-get cannot install it here (not root): install Debian's prometheus package or set SLUICE_PROMETHEUS" };
  } catch (error) {
    return { error: (error as Error).message }; // a wrong SLUICE_* path, a failed install: fails the tests below
  }
})();
if (prometheusBinary.why) process.stderr.write(`\nSKIPPED the dashboard and alerts on a real Prometheus: ${prometheusBinary.why}\n`);
const withPrometheus = prometheusBinary.why ? describe.skip : describe;

const kafka = createKafka();
const dashboard = JSON.parse(readFileSync(join(ROOT, 'helm/sluice/dashboards/sluice.json'), 'utf8')) as {
  panels: Array<{ title: string; targets: Array<{ expr: string }> }>;
  templating: { list: Array<{ name: string; query: unknown }> };
};

/** A panel query as Grafana sends it: the job variable (All), top producers 10, the rate interval of a 1 s scrape. */
const filled = (expr: string): string =>
  expr.replace(/\$\{?job\}?/g, JOB).replace(/\$\{?topk\}?/g, '10').replace(/\$\{?__rate_interval\}?/g, '10s');

withPrometheus('the dashboard and the alerts on a real Prometheus scraping real sidecars', () => {
  let scenario: BacklogScenario;
  let dir: string;
  let prometheus: Owned | undefined;
  let api: string;
  let load: Promise<Offered>;
  const loadDone = new AbortController(); // the checks need the load only while they run
  let rules: Rule[];
  const replicas: Replica[] = [];
  const startedAt = Date.now();

  const query = async (promql: string): Promise<QueryAnswer> => {
    const response = await fetch(`${api}/api/v1/query?query=${encodeURIComponent(promql)}`);
    return (await response.json()) as QueryAnswer;
  };
  const ruleStates = async (): Promise<RuleState[]> => {
    const answer = (await (await fetch(`${api}/api/v1/rules?type=alert`)).json()) as { data: { groups: Array<{ rules: RuleState[] }> } };
    return answer.data.groups.flatMap((g) => g.rules);
  };

  beforeAll(async () => {
    if (prometheusBinary.error) throw new Error(prometheusBinary.error);
    scenario = await createBacklogScenario(kafka, {
      brokers: kafkaBrokers().join(','), redisUrl: redisUrl(), partitions: 2, quotas: QUOTAS,
      // doomed's window reopens in up to an hour, past retry.maxAge: dead-lettered at its first decision
      settings: { SLUICE_RETRY_TIERS: '1s,2s', SLUICE_RETRY_MAX_AGE: '10m', SLUICE_HOLD_MAX_MS: '1000' },
    });
    dir = mkdtempSync(join(tmpdir(), 'sluice-prometheus-'));
    // The first replica creates the tiers and the dead-letter topic; the second joins then.
    replicas.push(await startReplica(scenario));
    await replicas[0].ready();
    replicas.push(await startReplica(scenario));
    await replicas[1].ready();

    // The chart's rules as helm renders them, thresholds low enough for a 30 s load; every `for` kept.
    const manifests = render('sluice', [
      '--set', 'alerts.enabled=true', '--set', `config.topics.ingress=${scenario.ingress}`,
      '--set-json', 'alerts.deadLettered.perSecond=0', '--set', 'alerts.retryTierDepth.minMessages=0', '--set', 'alerts.retryTierDepth.window=30s',
      '--set', 'alerts.ingressLag.minMessages=0', '--set', 'alerts.ingressLag.window=30s',
    ]);
    const groups = manifests.find((m) => m.kind === 'PrometheusRule')?.spec.groups as Array<{ rules: Rule[] }>;
    rules = groups.flatMap((g) => g.rules);
    writeFileSync(join(dir, 'rules.yaml'), stringify({ groups }));
    const port = await freePort();
    api = `http://127.0.0.1:${port}`;
    writeFileSync(join(dir, 'prometheus.yml'), stringify({
      global: { scrape_interval: '1s', scrape_timeout: '1s', evaluation_interval: '1s' },
      rule_files: [join(dir, 'rules.yaml')],
      scrape_configs: [{ job_name: JOB, static_configs: [{ targets: replicas.map((r) => `127.0.0.1:${r.port}`) }] }],
    }));
    prometheus = spawnOwned(prometheusBinary.path as string, [
      `--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn',
    ], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    prometheus.process.stderr?.on('data', (chunk: Buffer) => void (stderr += chunk.toString()));
    await waitFor(() => fetch(`${api}/-/ready`).then((r) => r.ok, () => false), { timeoutMs: 30_000, intervalMs: 200, message: () => `Prometheus to be ready (${stderr.trim().split('\n').slice(-3).join(' | ')})` });
    load = offerLoad(kafkaBrokers(), scenario.ingress, LOAD, { until: loadDone.signal });
    load.catch(() => undefined);
  }, 90_000);

  afterAll(async () => {
    loadDone.abort();
    await load?.catch(() => undefined);
    if (prometheus) await stopOwned(prometheus, 'SIGTERM', 5_000);
    await endAllReplicas();
    if (scenario) await deleteScenarioTopics(kafka, scenario);
    if (dir) rmSync(dir, { recursive: true, force: true });
    process.stderr.write(`[prometheus] the whole file took ${((Date.now() - startedAt) / 1000).toFixed(1)} s\n`);
  }, 60_000);

  it('scrapes both replicas', async () => {
    await waitFor(async () => (await query(`sum(up{job="${JOB}"})`)).data.result[0]?.value[1] === '2', { timeoutMs: 15_000, intervalMs: 500, message: 'both targets up' });
  }, 20_000);

  it('answers every panel query of the dashboard with data, and the job variable with the job', async () => {
    const empty = new Map<string, string>();
    await waitFor(async () => {
      empty.clear();
      for (const panel of dashboard.panels) {
        for (const target of panel.targets) {
          const answer = await query(filled(target.expr));
          if (answer.status !== 'success') throw new Error(`${panel.title}: ${filled(target.expr)}: ${answer.error}`);
          if (answer.data.result.length === 0) empty.set(filled(target.expr), panel.title);
        }
      }
      return empty.size === 0;
    }, { timeoutMs: 40_000, intervalMs: 2_000, message: () => `data for every panel; still empty: ${[...empty].map(([expr, title]) => `${title}: ${expr}`).join('; ')}` });
    const jobs = (await (await fetch(`${api}/api/v1/label/job/values?match[]=sluice_messages_total`)).json()) as { data: string[] };
    expect(jobs.data).toContain(JOB);
    // Each producer's rate needs two scrapes of its series within the window: calm's may come a scrape after busy's.
    const producers = async (): Promise<string[]> =>
      (await query(filled('sum by (producer) (rate(sluice_producer_messages_total{job=~"$job",outcome="forwarded"}[$__rate_interval]))'))).data.result.map((r) => r.metric.producer);
    const seen = await waitFor(async () => {
      const now = await producers();
      return ['calm', 'busy'].every((p) => now.includes(p)) ? now : undefined;
    }, { timeoutMs: 15_000, intervalMs: 1_000, message: 'a forwarded rate for calm and busy' });
    expect(seen).toEqual(expect.arrayContaining(['calm', 'busy']));
  }, 70_000);

  it('evaluates every alert rule without error; the load raises dead-lettering and a growing tier, a healthy sidecar nothing else', async () => {
    for (const rule of rules) {
      const answer = await query(rule.expr);
      expect({ alert: rule.alert, status: answer.status, error: answer.error }).toEqual({ alert: rule.alert, status: 'success', error: undefined });
    }
    const implied = ['SluiceDeadLettering', 'SluiceRetryTierDepthGrowing'];
    let states: RuleState[] = [];
    await waitFor(async () => {
      states = await ruleStates();
      const named = states.find((s) => s.name === 'SluiceDeadLettering')?.alerts[0]?.annotations.description.includes('doomed');
      return states.length === rules.length && states.every((s) => s.health === 'ok') && implied.every((name) => states.find((s) => s.name === name)?.alerts.length) && named;
    }, {
      timeoutMs: 45_000, intervalMs: 1_000,
      message: () => `every rule ok, ${implied.join(', ')} pending, doomed named: ${JSON.stringify(states.map((s) => ({ name: s.name, health: s.health, lastError: s.lastError, alerts: s.alerts })))}`,
    });

    const dead = states.find((s) => s.name === 'SluiceDeadLettering')?.alerts[0];
    expect(dead).toMatchObject({ state: 'pending', labels: { job: JOB, severity: 'warning' } });
    expect(dead?.annotations.description).toMatch(/Most dead-lettered: .*\bdoomed \(\d+\.\d\d\/s\)/);
    const tier = states.find((s) => s.name === 'SluiceRetryTierDepthGrowing')?.alerts ?? [];
    process.stderr.write(`[prometheus] pending after ${((Date.now() - startedAt) / 1000).toFixed(1)} s: ${dead?.annotations.description}; ${tier.map((a) => `${a.labels.topic} at ${Number(a.value).toFixed(0)}`).join(', ')}\n`);
    expect(tier.map((a) => a.labels.topic).every((t) => t.startsWith(`${scenario.retryBase}.`))).toBe(true);

    for (const name of ['SluiceStoreFallbackActive', 'SluiceDestinationStuck', 'SluiceConsumerNotInGroup', 'SluiceDown']) {
      const rule = rules.find((r) => r.alert === name) as Rule;
      expect({ name, series: (await query(rule.expr)).data.result }).toEqual({ name, series: [] });
    }
    // producers over quota: the ingress lag is theirs, not sluice's
    const lag = rules.find((r) => r.alert === 'SluiceIngressLagGrowing') as Rule;
    expect((await query(lag.expr)).data.result).toEqual([]);
    // the readiness gauge behind SluiceConsumerNotInGroup: both groups joined on both replicas
    const joined = await query(`sluice_consumer_joined{job="${JOB}"} == 1`);
    expect(joined.data.result).toHaveLength(4);
  }, 60_000);
});
