/**
 * `npm run demo`: starts (or reuses) Kafka and Redis, creates demo topics, runs `sluice run`
 * with config/demo-quotas.yaml, offers a synthetic load of a few producers at different
 * multiples of their quotas for about 30 s with a live table, under a downstream budget that
 * one producer leaves idle halfway (a table per phase, and a verdict: how the shares moved),
 * lets what waits drain for a while, prints a summary, then stops what it started (and only
 * that): the sidecar, the demo topics, and the services this run started. At the end it prints
 * where each endpoint is;
 * `npm run demo -- --prometheus` also runs a Prometheus beside the sidecar (when one is
 * installed) and prints its URL.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type Admin, Kafka, logLevel } from 'kafkajs';
import { down, up } from '../services/services';
import { freePort } from '../services/ports';
import { DEMO, DEMO_PHASES, DEMO_PRODUCERS } from './demo-plan';
import { createObserver, type Observer } from './observe';
import { budgetState, liveTable, redraw, summaryTable, usageLines } from './demo-table';
import { createPhaseMeter, phaseTable, type PhaseResult, verdict } from './budget-phases';
import { budgetLine } from '../../src/budget/budget-view';
import { loadQuotas, resolveRule } from '../../src/rules';
import type { UsageAnswer } from '../../src/usage';
import { type Load, startLoad } from './load';
import { startSidecar, type Sidecar } from './sidecar-process';
import { startDemoPrometheus, whereToLook } from './prometheus';
import { createTopicsWithLeaders } from '../../src/topics/create-topics';

const root = resolve(__dirname, '../..');
const say = (text: string): void => void process.stdout.write(`${text}\n`);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

type Cleanups = (() => Promise<unknown>)[];
const state = { interrupted: false };

/** Demo topics (deleted at the end with the tiers, dead-letter topic and groups sluice made for them). */
const createDemoTopics = async (admin: Admin, run: string, cleanups: Cleanups) => {
  const topics = { ingress: `${run}.in`, downstream: `${run}.out` };
  await createTopicsWithLeaders(admin, Object.values(topics).map((topic) => ({ topic, numPartitions: DEMO.partitions })));
  cleanups.unshift(async () => {
    const mine = (await admin.listTopics()).filter((t) => t.startsWith(run));
    await admin.deleteTopics({ topics: mine });
    const groups = (await admin.listGroups()).groups.filter((g) => g.groupId.includes(run));
    // Best effort: a group whose member has not left yet is removed by the broker later anyway.
    if (groups.length) await admin.deleteGroups(groups.map((g) => g.groupId)).catch(() => undefined);
  });
  return topics;
};

const sidecarEnv = (env: Record<string, string>, topics: { ingress: string; downstream: string }, keyPrefix: string, httpPort: number, adminPort: number): NodeJS.ProcessEnv => ({
  ...process.env, ...env,
  SLUICE_INGRESS_TOPIC: topics.ingress, SLUICE_DOWNSTREAM_TOPIC: topics.downstream, SLUICE_TOPICS_CREATE: 'true',
  SLUICE_QUOTAS_FILE: join(root, DEMO.quotasFile), SLUICE_RETRY_TIERS: DEMO.tiers, SLUICE_HOLD_MAX_MS: String(DEMO.holdMaxMs),
  SLUICE_REDIS_KEY_PREFIX: keyPrefix, SLUICE_REDIS_TIMEOUT_MS: DEMO.redisTimeoutMs,
  SLUICE_HTTP_HOST: '127.0.0.1', SLUICE_HTTP_PORT: String(httpPort), SLUICE_HTTP_ADMIN_PORT: String(adminPort), SLUICE_LOG_LEVEL: 'warn',
});

/**
 * The live table once a second (every 5 s when not on a terminal) until the load is over and
 * nothing waits (or the settle time is up); the budget's table at the end of each phase.
 */
const watch = async (load: Load, observer: Observer, sidecar: Sidecar, totalLabel: string): Promise<{ started: number; phases: PhaseResult[] }> => {
  const tty = process.stdout.isTTY === true;
  const started = Date.now();
  const meter = createPhaseMeter(DEMO_PHASES);
  const phases: PhaseResult[] = [];
  let drawn = 0;
  let loadDone = false;
  void load.done.then(() => void (loadDone = true));
  for (let second = 1; !state.interrupted; second += 1) {
    await sleep(Math.max(0, started + second * 1000 - Date.now()));
    const rows = await observer.sample(load.offered);
    const elapsed = (Date.now() - started) / 1000;
    const phase = loadDone ? 'load over, releasing what waits' : `offering load, ${DEMO_PHASES.find((p) => elapsed < p.toS)?.name ?? 'ending'}`;
    const lines = liveTable(elapsed, phase, budgetState(totalLabel, observer.budgetInForce(), rows.map((r) => r.share)), rows);
    if (tty) {
      process.stdout.write(redraw(drawn, lines));
      drawn = lines.length;
    } else if (second % 5 === 0) {
      say(lines.join('\n'));
    }
    const ended = meter.add(elapsed, rows, observer.budgetInForce());
    if (ended) {
      phases.push(ended);
      say(`\n${phaseTable(ended, totalLabel).join('\n')}\n`);
      drawn = 0;
    }
    const waiting = rows.some((r) => r.backlogMs > 0 || r.offered > r.forwarded + r.deadLettered);
    if (state.interrupted) break;
    if (sidecar.exited()) throw new Error(`sluice run stopped unexpectedly; see ${sidecar.logFile}`);
    if (loadDone && (!waiting || elapsed > DEMO.loadSeconds + DEMO.settleSeconds)) break;
  }
  return { started, phases };
};

/** What the usage history kept of the last minute (the sidecar's own endpoint on its admin listener, as a user would read it). */
const lastMinute = async (adminPort: number): Promise<void> => {
  const read = async ({ id }: { id: string }): Promise<UsageAnswer> => {
    const response = await fetch(`http://127.0.0.1:${adminPort}/v1/producers/${encodeURIComponent(id)}/usage?resolution=1s&since=1m`);
    if (!response.ok) throw new Error(`GET /v1/producers/${id}/usage: HTTP ${response.status} ${await response.text()}`);
    return (await response.json()) as UsageAnswer;
  };
  try {
    const answers = await Promise.all(DEMO_PRODUCERS.map(read));
    say('\nthe last minute from the usage history (sluice usage PRODUCER --resolution 1s --since 1m, or GET /v1/producers/{id}/usage):');
    say(usageLines(answers).join('\n'));
  } catch (error) {
    say(`\nthe usage history could not be read: ${(error as Error).message}`);
  }
};

const summarize = async (load: Load, observer: Observer, started: number, adminPort: number, phases: readonly PhaseResult[]): Promise<void> => {
  const rows = await observer.sample(load.offered);
  const seconds = (Date.now() - started) / 1000;
  say(`\nsummary after ${seconds.toFixed(0)} s (forwarded/s over that time; "still waiting" is parked or held when the demo ended):`);
  say(summaryTable(rows, seconds).join('\n'));
  const storeErrors = observer.storeErrors();
  if (storeErrors > 0) say(`\nthe limiter store timed out ${storeErrors} time(s) (a busy machine): limiter.onStoreError=local decided those calls in memory`);
  await lastMinute(adminPort);
  say(`\n${verdict(phases, DEMO_PRODUCERS.filter((p) => p.idleFromS !== undefined).map((p) => p.id)).join('\n')}`);
  say('\nproducers within their quota pass untouched; those above it are shaped to their quota, and what exceeds their queue is parked, retried and, when the overload lasts, dead-lettered;'
    + ' while they together ask for more than the budget (total:), it is divided by weight, each at most its own rule, and what an idle producer frees goes to the others.');
};

const main = async (): Promise<number> => {
  const cleanups: Cleanups = [];
  // `on`, not `once`: tsx relays a Ctrl-C a second time, which must not kill the clean-up.
  process.on('SIGINT', () => void (state.interrupted = true));
  try {
    say('starting (or reusing) Kafka and Redis — the first run fetches the Kafka jars with Maven, which takes a while');
    const services = await up({});
    if (services.started.length) cleanups.unshift(() => down(services.started));
    const env = services.env;
    const run = `sluice-demo-${Date.now().toString(36)}-${randomBytes(2).toString('hex')}`;
    const kafka = new Kafka({ clientId: 'sluice-demo', brokers: env.SLUICE_KAFKA_BROKERS.split(','), logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    await admin.connect();
    cleanups.unshift(() => admin.disconnect());
    const topics = await createDemoTopics(admin, run, cleanups);
    const httpPort = await freePort();
    const adminPort = await freePort();
    const logFile = join(mkdtempSync(join(tmpdir(), 'sluice-demo-')), 'sluice.log');
    say(`running sluice (log: ${logFile})`);
    const sidecar = await startSidecar({ root, httpPort, logFile, env: sidecarEnv(env, topics, `${run}:`, httpPort, adminPort) });
    cleanups.unshift(() => sidecar.stop());
    const prometheus = process.argv.includes('--prometheus') ? await startDemoPrometheus(httpPort, say) : undefined;
    if (prometheus) {
      cleanups.unshift(() => prometheus.stop());
      say(`Prometheus: ${prometheus.url} (scraping the sidecar's /metrics every second)`);
    }
    const quotasFile = join(root, DEMO.quotasFile);
    const observer = createObserver({ root, redisUrl: env.SLUICE_REDIS_URL, keyPrefix: `${run}:`, httpPort, producers: DEMO_PRODUCERS, quotasFile });
    cleanups.unshift(() => observer.close());
    const rules = loadQuotas(quotasFile);
    const total = rules.total;
    if (!total) throw new Error(`${DEMO.quotasFile} has no total: (the downstream budget the demo shows)`);
    // What the load would be forwarded at under the producers' own rules alone (each its offered rate, at most its rule's).
    const ownRules = DEMO_PRODUCERS.reduce((sum, p) => sum + Math.min(p.rate, 1000 / (resolveRule(rules, p.id).limit?.intervalMs ?? 0)), 0);
    say(`load: ${DEMO_PRODUCERS.map((p) => `${p.id} ${p.rate}/s (${p.note})`).join('; ')}`);
    say(`${budgetLine(total)}, below the ${ownRules}/s the producers' own rules would forward together: divided by weight while contended`);
    const load = await startLoad(kafka, topics.ingress, DEMO_PRODUCERS, DEMO.loadSeconds);
    const { started, phases } = await watch(load, observer, sidecar, total.rateLabel);
    load.stop();
    await load.done;
    await summarize(load, observer, started, adminPort, phases);
    say(`\n${whereToLook({ http: httpPort, admin: adminPort }, prometheus?.url).join('\n')}`);
    return 0;
  } finally {
    say('stopping what the demo started');
    for (const cleanup of cleanups) await cleanup().catch((error: Error) => say(`cleanup: ${error.message}`));
  }
};

main().then(
  (code) => process.exit(code),
  (error: Error) => {
    process.stderr.write(`demo failed: ${error.message}\n`);
    process.exit(1);
  },
);
