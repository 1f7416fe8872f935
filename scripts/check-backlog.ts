/**
 * The held-out black-box check of issue 9: `npx tsx scripts/check-backlog.ts`.
 *
 * Three producers offer 0.5×, 2× and 3× of a 100/s quota for 10 s, each from its own kafkajs
 * client, through real `sluice run` processes (`node --import tsx src/main.ts run`, settings by
 * environment only, as a user would) on the shared Kafka and Redis, with `queue` 20 and 60s and
 * with 1 and 2 replicas. Judged by message ids and the downstream topic's broker append time
 * (test/integration/retry/backlog-fixture.ts). Per case it prints:
 * - forwarded once: every offered id downstream exactly once (count, duplicates, lost, dead-lettered);
 * - quota used while backlogged, per backlogged producer: 97–102%;
 * - busiest second per producer: ≤ 1.15 × rate + 3 per replica;
 * - order kept (per key) for the producer under its quota.
 * Exit 0 when every bound holds, 1 when one breaks, 2 when the check itself failed.
 *
 * Options: --root DIR (the sluice work tree to run; default this one), --case Q/N (that case
 * instead of the four, e.g. 60s/2 or 10m/1; repeatable), --rate N (100), --seconds N (10),
 * --factors LIST (what each producer offers, × the rate: 0.5,2,3; one under 1 is the producer
 * under its quota), --tiers LIST and --hold-max-ms N (default: sluice's own defaults), --dump DIR
 * (writes each case's offers and outcome, with times, to DIR/<queue>-<replicas>.json), --log-level L
 * (the replicas' log level, default warn; their logs are kept in the scenario's temporary folder).
 * Services: SLUICE_KAFKA_BROKERS and SLUICE_REDIS_URL, else what `npm run services -- up` prints.
 */
import { loadavg } from 'node:os';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { servicesEnv } from '../bench/pipeline/services-env';
import { createKafka } from '../test/helpers/kafka';
import {
  busiestBound, createBacklogScenario, deleteScenarioTopics, endAllReplicas, formatJudgement, judgeAll, offerLoad, readOutcome,
  Replica, startReplica, tierRecords,
} from '../test/integration/retry/backlog-fixture';
import { commitOf } from './commit-of';

const { values: args } = parseArgs({
  options: {
    root: { type: 'string' },
    case: { type: 'string', multiple: true },
    rate: { type: 'string', default: '100' },
    seconds: { type: 'string', default: '10' },
    factors: { type: 'string', default: '0.5,2,3' },
    tiers: { type: 'string' },
    'hold-max-ms': { type: 'string' },
    dump: { type: 'string' },
    'log-level': { type: 'string' },
  },
});
const RATE = Number(args.rate);
const SECONDS = Number(args.seconds);
const root = resolve(args.root ?? resolve(__dirname, '..'));
process.env.SLUICE_ROOT_UNDER_TEST = root;
const CASES: [string, number][] = [['20', 1], ['20', 2], ['60s', 1], ['60s', 2]];
const caseOf = (text: string): [string, number] => {
  const [queue, replicas] = text.split('/');
  if (!queue || !['1', '2'].includes(replicas)) throw new Error(`--case ${text}: expected QUEUE/REPLICAS, e.g. 60s/2 (1 or 2 replicas)`);
  return [queue, Number(replicas)];
};
const chosen = args.case ? args.case.map(caseOf) : CASES;
const NAMES: Record<string, string> = { '0.5': 'half', '2': 'double', '3': 'triple' };
const FACTORS = args.factors.split(',').map(Number);
if (FACTORS.some((f) => !(f > 0))) throw new Error(`--factors ${args.factors}: expected positive numbers, e.g. 0.5,2,3`);
const PRODUCERS = FACTORS.map((f) => ({ id: NAMES[String(f)] ?? `x${f}`, perSecond: f * RATE, seconds: SECONDS, keys: f < 1 ? 4 : 8 }));
const UNDER_QUOTA = PRODUCERS.find((_, i) => FACTORS[i] < 1)?.id;

const say = (line: string): void => void process.stdout.write(`${line}\n`);
const load = (): string => loadavg().map((x) => x.toFixed(2)).join(' ');
const pct = (x: number): string => (Number.isNaN(x) ? 'n/a' : `${x.toFixed(1)}%`);

const runCase = async (services: { brokers: string; redisUrl: string }, queue: string, replicas: number): Promise<string[]> => {
  const kafka = createKafka();
  const settings: Record<string, string> = {};
  if (args.tiers) settings.SLUICE_RETRY_TIERS = args.tiers;
  if (args['hold-max-ms']) settings.SLUICE_HOLD_MAX_MS = args['hold-max-ms'];
  if (args['log-level']) settings.SLUICE_LOG_LEVEL = args['log-level'];
  const s = await createBacklogScenario(kafka, {
    brokers: services.brokers, redisUrl: services.redisUrl, partitions: 4, quotas: `default:\n  rate: ${RATE}/s\n  queue: ${queue}\n`, settings,
  });
  try {
    const running: Replica[] = [];
    for (let i = 0; i < replicas; i += 1) {
      const r = await startReplica(s);
      running.push(r);
      await r.ready(); // one at a time: the first creates the tiers
    }
    const reader = await readOutcome(kafka, s);
    const offered = await offerLoad(services.brokers.split(','), s.ingress, PRODUCERS);
    const every = [...offered.byProducer.values()].flat().map((o) => o.value);
    const slowest = Math.max(...FACTORS) * SECONDS;
    const complete = await reader.accounted(every, offered.startedAt + (2 * slowest + 20) * 1000);
    const stops = await Promise.all(running.map((r) => r.stop('SIGTERM')));
    const outcome = await reader.finish();
    const tiers = await tierRecords(kafka, s);
    if (args.dump) {
      mkdirSync(args.dump, { recursive: true });
      writeFileSync(join(args.dump, `${queue}-${replicas}.json`), JSON.stringify({ offered: Object.fromEntries(offered.byProducer), startedAt: offered.startedAt, outcome }));
    }
    const js = judgeAll(offered, outcome, () => RATE);
    const bound = busiestBound(RATE, replicas, 3);
    const broken: string[] = [];
    const total = js.reduce((a, j) => ({ offered: a.offered + j.offered, forwarded: a.forwarded + j.forwarded, dup: a.dup + j.duplicates, lost: a.lost + j.lost, dead: a.dead + j.deadLettered }),
      { offered: 0, forwarded: 0, dup: 0, lost: 0, dead: 0 });
    say(`\nqueue ${queue}, ${replicas} replica(s), rate ${RATE}/s, tiers ${args.tiers ?? 'default'}, hold.maxMs ${args['hold-max-ms'] ?? 'default'} (load average ${load()})`);
    say(`  forwarded once: ${total.forwarded} of ${total.offered} (duplicates ${total.dup}, lost ${total.lost}, dead-lettered ${total.dead})${complete ? '' : ' — not all accounted for by the deadline'}`);
    if (total.forwarded !== total.offered || total.dup > 0) broken.push(`forwarded once: ${total.forwarded} of ${total.offered}, ${total.dup} duplicates, ${total.lost} lost, ${total.dead} dead-lettered`);
    const backlogged = js.filter((j) => j.id !== UNDER_QUOTA);
    say(`  quota used while backlogged [97–102%]: ${backlogged.map((j) => `${j.id} ${pct(j.quotaUsedPct)} over ${(j.backloggedMs / 1000).toFixed(1)} s`).join(', ')}`);
    for (const j of backlogged) if (!(j.quotaUsedPct >= 97 && j.quotaUsedPct <= 102)) broken.push(`${j.id}: quota used ${pct(j.quotaUsedPct)}`);
    say(`  busiest second [≤ ${bound}]: ${js.map((j) => `${j.id} ${j.busiest1s} (${(j.busiest1s / RATE).toFixed(2)}×)`).join(', ')}`);
    for (const j of js) if (j.busiest1s > bound) broken.push(`${j.id}: busiest second ${j.busiest1s} > ${bound}`);
    const under = js.find((j) => j.id === UNDER_QUOTA);
    if (under) {
      say(`  order kept for ${under.id} (under its quota, per key): ${under.keysOutOfOrder === 0 ? 'yes' : `no (${under.keysOutOfOrder} keys out of order)`}`);
      if (under.keysOutOfOrder !== 0) broken.push(`${under.id}: ${under.keysOutOfOrder} keys out of order`);
    }
    say(`  tier records ${JSON.stringify(tiers)}; stops: ${stops.map((e) => `exit ${e.code} in ${e.ms} ms`).join(', ')}`);
    for (const j of js) say(`  ${formatJudgement(j, RATE)}`);
    say(`  ${broken.length === 0 ? 'PASS' : `FAIL: ${broken.join('; ')}`}`);
    return broken.map((b) => `queue ${queue}, ${replicas} replica(s): ${b}`);
  } finally {
    await endAllReplicas();
    await deleteScenarioTopics(kafka, s);
  }
};


const main = async (): Promise<number> => {
  const services = servicesEnv(process.env);
  process.env.SLUICE_KAFKA_BROKERS = services.brokers;
  say(`check-backlog: sluice from ${root} (${commitOf(root)}); Kafka ${services.brokers}, Redis ${services.redisUrl}; load average ${load()}`);
  const broken: string[] = [];
  for (const [queue, replicas] of chosen) broken.push(...await runCase(services, queue, replicas));
  say(`\n${broken.length === 0 ? 'check-backlog: every bound held' : `check-backlog: ${broken.length} bound(s) broken:\n${broken.map((b) => `  - ${b}`).join('\n')}`}`);
  return broken.length === 0 ? 0 : 1;
};

const interrupted = (): void => {
  void endAllReplicas().finally(() => process.exit(130));
};
process.once('SIGINT', interrupted);
process.once('SIGTERM', interrupted);

main().then(
  (code) => process.exit(code),
  async (error: unknown) => {
    process.stderr.write(`check-backlog: ${(error as Error)?.stack ?? String(error)}\n`);
    await endAllReplicas();
    process.exit(2);
  },
);
