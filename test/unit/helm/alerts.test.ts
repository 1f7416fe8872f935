/**
 * The chart's alerts (helm/sluice/alerts/rules.yaml, rendered as a PrometheusRule with
 * alerts.enabled): their shape, labels and values, a runbook section for each, and then the real
 * promtool on the groups helm rendered: `promtool check rules`, and `promtool test rules` with
 * alerts.rules-test.yaml (series that fire each alert and series that must not).
 * promtool comes from SLUICE_PROMTOOL (`npm test` sets it), PATH, or Debian's prometheus package,
 * installed here with apt-get when running as root; with neither, the promtool tests are skipped
 * and say so.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { canInstallWithApt, ensurePrometheusTools, findPrometheusTool } from '../../../scripts/test-steps/promtool';
import { render, runHelm, type Manifest } from './helm-binary';

interface Rule {
  alert: string;
  expr: string;
  for: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}
type Group = { name: string; rules: Rule[] };

const ALERTS = [
  'SluiceStoreFallbackActive', 'SluiceDestinationStuck', 'SluiceDeadLettering', 'SluiceConsumerNotInGroup',
  'SluiceDown', 'SluiceIngressLagGrowing', 'SluiceRetryTierDepthGrowing',
];

const ruleOf = (manifests: Manifest[]): Manifest | undefined => manifests.find((m) => m.kind === 'PrometheusRule');
const groupsOf = (args: string[] = []): Group[] => (ruleOf(render('sluice', ['--set', 'alerts.enabled=true', ...args]))?.spec.groups ?? []) as Group[];
const rules = (groups: Group[]): Rule[] => groups.flatMap((g) => g.rules);
const byName = (groups: Group[], name: string): Rule => rules(groups).find((r) => r.alert === name) as Rule;

/** GitHub's anchor of a markdown heading. */
const anchor = (heading: string): string => heading.trim().toLowerCase().replace(/[^a-z0-9 -]/g, '').replace(/ /g, '-');
const runbook = readFileSync(join(__dirname, '../../../docs/runbook.md'), 'utf8');
const runbookAnchors = new Set([...runbook.matchAll(/^##+ (.+)$/gm)].map((m) => anchor(m[1])));

describe('the chart alerts', () => {
  it('are not rendered by default', () => {
    expect(ruleOf(render('sluice'))).toBeUndefined();
  });

  describe('when enabled', () => {
    const manifests = render('orders', ['--set', 'alerts.enabled=true', '--set', 'alerts.labels.release=kube-prometheus-stack', '--set', 'alerts.ruleLabels.team=payments']);
    const rule = ruleOf(manifests) as Manifest;
    const groups = rule.spec.groups as Group[];

    it('are one PrometheusRule labelled for the operator\'s ruleSelector', () => {
      expect((rule as unknown as { apiVersion: string }).apiVersion).toBe('monitoring.coreos.com/v1');
      expect(rule.metadata.labels).toMatchObject({ release: 'kube-prometheus-stack', 'app.kubernetes.io/instance': 'orders' });
    });

    it('cover the store fallback, a stuck destination, dead-lettering, a consumer out of its group, scraping, the ingress lag and the tiers', () => {
      expect(rules(groups).map((r) => r.alert)).toEqual(ALERTS);
    });

    it('each have a severity, the extra labels, a summary, a description and a runbook section of its own', () => {
      for (const r of rules(groups)) {
        expect(r.labels).toEqual({ severity: expect.stringMatching(/^(warning|critical)$/), team: 'payments' });
        expect(r.annotations.summary).toMatch(/\w/);
        expect(r.annotations.description).toMatch(/\{\{ .*\$labels\.(pod|instance|job|destination|group|topic)/);
        const [url, section] = r.annotations.runbook_url.split('#');
        expect(url).toBe('https://github.com/sluice/sluice/blob/main/docs/runbook.md');
        expect(section).toBe(r.alert.toLowerCase());
        expect(runbookAnchors).toContain(section);
      }
      expect(new Set(rules(groups).map((r) => r.annotations.runbook_url)).size).toBe(ALERTS.length);
    });

    it('pick sluice\'s series by the job of the ServiceMonitor\'s targets and the ingress topic, with no placeholder left', () => {
      const text = JSON.stringify(groups);
      expect(text).not.toMatch(/__[A-Z_]+__/);
      for (const r of rules(groups)) expect(r.expr).toContain('job="orders-sluice"');
      expect(byName(groups, 'SluiceIngressLagGrowing').expr).toContain('topic="events"');
    });
  });

  it('take their thresholds and selector from the values, and the stuck time from kafka.stuckAfterMs', () => {
    const groups = groupsOf([
      '--set', 'config.kafka.stuckAfterMs=90000', '--set-json', 'alerts.deadLettered.perSecond=0.5', '--set', 'alerts.storeFallback.for=2m',
      '--set', 'config.topics.ingress=orders', '--set-string', 'alerts.selector=namespace="shop"\\,container="sluice"',
    ]);
    expect(byName(groups, 'SluiceDestinationStuck').for).toBe('90s');
    expect(byName(groups, 'SluiceDeadLettering').expr).toMatch(/> 0\.5$/);
    expect(byName(groups, 'SluiceStoreFallbackActive').for).toBe('2m');
    expect(byName(groups, 'SluiceDown').expr).toBe('up{namespace="shop",container="sluice"} == 0');
    expect(byName(groups, 'SluiceIngressLagGrowing').expr).toContain('{namespace="shop",container="sluice",topic="orders"}');
    expect(byName(groupsOf(['--set', 'alerts.destinationStuck.for=7m']), 'SluiceDestinationStuck').for).toBe('7m');
  });

  it('need a selector as a sidecar (the job is the workload\'s), and refuse thresholds that are not durations', () => {
    const sidecar = runHelm(['template', 'x', '.', '--set', 'mode=sidecar', '--set', 'alerts.enabled=true']);
    expect(sidecar.status).not.toBe(0);
    expect(sidecar.stderr).toContain('alerts.selector');
    const bad = runHelm(['template', 'x', '.', '--set', 'alerts.enabled=true', '--set', 'alerts.storeFallback.for=five minutes']);
    expect(bad.status).not.toBe(0);
    expect(bad.stderr).toContain('/alerts/storeFallback/for');
  });
});

/** promtool: found, or installed when that is possible; undefined (with the reason) otherwise. */
const promtool = ((): { path?: string; why?: string; error?: string } => {
  try {
    const found = findPrometheusTool('promtool');
    if (found) return { path: found };
    if (canInstallWithApt()) return { path: ensurePrometheusTools((line) => process.stderr.write(`${line}\n`)).promtool };
    return { why: "promtool is not installed and apt-get cannot install it here (not root): install Debian's prometheus package or set SLUICE_PROMTOOL" };
  } catch (error) {
    return { error: (error as Error).message }; // a wrong SLUICE_* path, a failed install: fails the tests below
  }
})();
if (promtool.why) process.stderr.write(`\nSKIPPED the promtool tests of the chart alerts: ${promtool.why}\n`);
const withPromtool = promtool.why ? describe.skip : describe;

withPromtool('the chart alerts under the real promtool', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-alerts-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const run = (args: string[]) => spawnSync(promtool.path as string, args, { cwd: dir, encoding: 'utf8', timeout: 60_000 });

  beforeAll(() => {
    if (promtool.error) throw new Error(promtool.error);
    writeFileSync(join(dir, 'rules.yaml'), stringify({ groups: groupsOf() }));
    copyFileSync(join(__dirname, 'alerts.rules-test.yaml'), join(dir, 'alerts.rules-test.yaml'));
  });

  it('pass promtool check rules', () => {
    const result = run(['check', 'rules', 'rules.yaml']);
    expect(`${result.stdout}${result.stderr}`).toContain(`SUCCESS: ${ALERTS.length} rules found`);
    expect(result.status).toBe(0);
  });

  it('fire on the series that imply them and stay quiet on the others (promtool test rules)', () => {
    const result = run(['test', 'rules', 'alerts.rules-test.yaml']);
    expect(`${result.stdout}${result.stderr}`).toContain('SUCCESS');
    expect(result.status).toBe(0);
  });

  it('have a test of their own in the rules test, each firing and each staying quiet', () => {
    const text = readFileSync(join(dir, 'alerts.rules-test.yaml'), 'utf8');
    for (const name of ALERTS) {
      const checks = [...text.matchAll(new RegExp(`alertname: ${name}\\n\\s+exp_alerts:( \\[\\])?`, 'g'))];
      expect({ name, quiet: checks.some((c) => c[1] !== undefined), fires: checks.some((c) => c[1] === undefined) }).toEqual({ name, quiet: true, fires: true });
    }
  });
});
