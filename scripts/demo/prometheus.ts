/**
 * `npm run demo -- --prometheus`: a Prometheus beside the sidecar, when one is on the machine
 * (Debian's prometheus package, or SLUICE_PROMETHEUS), scraping its /metrics every second, on a
 * free loopback port with a temporary config and storage (removed by stop()). And the lines the
 * demo ends with: where each of sluice's endpoints is (README "Health and readiness", "Metrics").
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findPrometheusTool } from '../test-steps/promtool';
import { freePort } from '../services/ports';

export interface DemoPrometheus {
  url: string;
  stop(): Promise<void>;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Started and ready, or undefined (after saying why) when there is no prometheus here or it does not come up. */
export const startDemoPrometheus = async (metricsPort: number, say: (line: string) => void): Promise<DemoPrometheus | undefined> => {
  const binary = findPrometheusTool('prometheus');
  if (!binary) {
    say('--prometheus: no prometheus on this machine (apt-get install prometheus, or set SLUICE_PROMETHEUS); the demo goes on without it');
    return undefined;
  }
  const dir = mkdtempSync(join(tmpdir(), 'sluice-demo-prometheus-'));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  writeFileSync(join(dir, 'prometheus.yml'), [
    'global: { scrape_interval: 1s, scrape_timeout: 1s }',
    'scrape_configs:',
    `  - { job_name: sluice, static_configs: [ { targets: ["127.0.0.1:${metricsPort}"] } ] }`,
    '',
  ].join('\n'));
  const child: ChildProcess = spawn(binary, [
    `--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn',
  ], { stdio: 'ignore' });
  let exited = false;
  const gone = new Promise<void>((resolve) => child.once('exit', () => resolve(void (exited = true))));
  const stop = async (): Promise<void> => {
    if (!exited) child.kill('SIGTERM');
    const kill = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await gone;
    clearTimeout(kill);
    rmSync(dir, { recursive: true, force: true });
  };
  for (const deadline = Date.now() + 20_000; Date.now() < deadline && !exited;) {
    if (await fetch(`${url}/-/ready`).then((r) => r.ok, () => false)) return { url, stop };
    await sleep(250);
  }
  await stop();
  say(`--prometheus: ${binary} did not come up within 20 s; the demo goes on without it`);
  return undefined;
};

/** What the demo prints at its end: each endpoint's URL path, on the ports this run used. */
export const whereToLook = (ports: { http: number; admin: number }, prometheusUrl?: string): string[] => {
  const main = `http://127.0.0.1:${ports.http}`;
  const admin = `http://127.0.0.1:${ports.admin}`;
  const rows: Array<[string, string]> = [
    [`${main}/healthz`, 'liveness: 503 once a consumer or a destination is stuck'],
    [`${main}/readyz`, 'readiness: 200 once both consumers joined their groups'],
    [`${main}/metrics`, 'Prometheus metrics (README "Metrics"; the chart\'s dashboard and alerts read them)'],
    [`${admin}/v1/status`, 'store, fallback, groups, held messages, send errors (the admin listener, loopback)'],
    [`${admin}/v1/quotas`, 'the rules in force'],
    [`${admin}/v1/producers/{id}`, 'a producer\'s rule, backlog, next free slot'],
    [`${admin}/v1/producers/{id}/usage`, 'its usage history (?resolution=1s&since=1m)'],
    ...(prometheusUrl ? [[`${prometheusUrl}/graph`, 'Prometheus, scraping /metrics every second: try sum by (producer) (rate(sluice_producer_messages_total{outcome="forwarded"}[10s]))'] as [string, string]] : []),
  ];
  const width = Math.max(...rows.map(([url]) => url.length));
  return [
    'where to look (the paths; the ports were this run\'s):',
    ...rows.map(([url, what]) => `  ${url.padEnd(width)}  ${what}`),
    ...(prometheusUrl ? [] : ['  (npm run demo -- --prometheus starts a Prometheus beside the sidecar when one is installed)']),
  ];
};
