/**
 * `npm run chaos`: fault injection against real `sluice run` processes, a real Kafka broker and
 * Redis — the suite's own (services.ts), started in its run directory and stopped at the end,
 * because it pauses and flushes them. Not part of `npm test`.
 *
 * Each scenario (scenarios.ts) runs on its own topics and Redis key prefix, offers load, injects
 * its fault, and is judged black-box by message ids (lost = offered − downstream − dead-lettered)
 * and the downstream topic's broker append time (test/integration/retry/backlog-fixture.ts).
 * One line per verdict as it finishes, then a markdown table and the total time.
 *
 *   CHAOS_SCENARIOS=sigterm,flushall   only these (names: see SCENARIOS)
 *   CHAOS_KAFKA_VERSION=4              broker version (default: the repository's, 3.9.2)
 *   CHAOS_LOG_LEVEL=debug              the replicas' log level (default warn)
 *   SLUICE_ROOT_UNDER_TEST=DIR         run the sluice of another work tree
 *   CHAOS_REPEAT=5                     rounds of the repeated faults (default 20)
 *   CHAOS_STOP_MS=2000-2400            rebalance-stopped-owner's freeze of the old owner (default 1000-2000)
 *
 * Exit 0 when every invariant held, 1 when one broke, 2 when the suite could not run or judge a
 * scenario (services did not start, a scenario threw, unknown scenario name). Replica and
 * service logs stay in the run directory printed at the start and the end.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { flattenSchema } from '../../src/config/schema';
import { deleteScenarioTopics, endAllReplicas } from '../../test/integration/retry/backlog-fixture';
import { resumeAll, sleep } from './faults';
import type { Ctx } from './harness';
import { errorRow, markdownTable, Row, rowLines, toRows } from './report';
import { SCENARIOS } from './scenarios';
import { killServicesNow, Services, startServices, stopServices } from './services';
import { commitOf } from '../commit-of';

const ROOT = resolve(__dirname, '../..');
const SCENARIO_TIMEOUT_MS = 240_000;

const say = (line: string): void => void process.stdout.write(`${line}\n`);
const note = (line: string): void => void process.stderr.write(`[chaos] ${line}\n`);
const load = (): string => loadavg().map((x) => x.toFixed(2)).join(' ');

/** Settings from the caller's shell must not reach the replicas (a SLUICE_REDIS_CLUSTER_NODES would win over the suite's Redis). */
const dropSluiceSettings = (): string[] => {
  const names = new Set([...flattenSchema().map((s) => s.env), 'SLUICE_CONFIG']);
  const dropped = Object.keys(process.env).filter((k) => names.has(k));
  for (const k of dropped) delete process.env[k];
  return dropped;
};


const withTimeout = <T>(promise: Promise<T>, ms: number, what: string): Promise<T> => {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, fail) => {
    timer = setTimeout(() => fail(new Error(`${what} did not finish within ${ms / 1000} s`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
};

const cleanUpScenario = async (ctx: Ctx): Promise<void> => {
  resumeAll();
  await endAllReplicas();
  const opened = ctx.opened.splice(0);
  await withTimeout(Promise.all(opened.map((s) => deleteScenarioTopics(ctx.kafka, s))), 60_000, 'deleting the topics').catch((e: Error) => note(e.message));
};

const main = async (): Promise<number> => {
  const began = Date.now();
  const wanted = (process.env.CHAOS_SCENARIOS ?? '').split(',').map((n) => n.trim()).filter(Boolean);
  const unknown = wanted.filter((n) => !SCENARIOS.some((s) => s.name === n));
  if (unknown.length > 0) {
    note(`unknown scenario(s) ${unknown.join(', ')}; choose from ${SCENARIOS.map((s) => s.name).join(', ')}`);
    return 2;
  }
  const chosen = wanted.length === 0 ? SCENARIOS : SCENARIOS.filter((s) => wanted.includes(s.name));
  const runDir = mkdtempSync(join(tmpdir(), 'sluice-chaos-'));
  const dropped = dropSluiceSettings();
  const root = process.env.SLUICE_ROOT_UNDER_TEST || ROOT;
  say(`chaos: sluice from ${root} (${commitOf(root)}); run directory (logs) ${runDir}; load average ${load()}`);
  if (dropped.length > 0) note(`ignoring ${dropped.join(', ')} from the environment: the suite uses its own services`);
  note('starting the suite\'s own Kafka broker and Redis');
  let services: Services;
  try {
    services = await startServices(runDir);
  } catch (error) {
    note(`could not start the services: ${(error as Error).message}`);
    return 2;
  }
  say(`chaos: Kafka ${services.kafkaVersion} on ${services.brokers} (pid ${services.kafka.pid}), Redis on ${services.redisUrl} (pid ${services.redis.pid}); started in ${((Date.now() - began) / 1000).toFixed(0)} s`);
  const ctx: Ctx = {
    services,
    kafka: new Kafka({ clientId: `chaos-${process.pid}`, brokers: [services.brokers], logLevel: logLevel.NOTHING }),
    brokers: [services.brokers],
    runDir,
    opened: [],
    note,
  };
  const rows: Row[] = [];
  try {
    for (const scenario of chosen) {
      const from = Date.now();
      note(`${scenario.name}: ${scenario.what} (load average ${load()})`);
      let done: Row[];
      try {
        const verdicts = await withTimeout(scenario.run(ctx), scenario.timeoutMs ?? SCENARIO_TIMEOUT_MS, scenario.name);
        done = toRows(verdicts, (Date.now() - from) / 1000);
      } catch (error) {
        done = [errorRow(scenario.name, error, (Date.now() - from) / 1000)];
      } finally {
        await cleanUpScenario(ctx);
      }
      for (const row of done) for (const line of rowLines(row)) say(line);
      rows.push(...done);
      await sleep(500);
    }
  } finally {
    note('stopping the suite\'s Kafka broker and Redis');
    await stopServices();
    rmSync(join(runDir, 'kafka', 'data'), { recursive: true, force: true });
  }
  const minutes = (Date.now() - began) / 60_000;
  say('');
  say(markdownTable(rows));
  say('');
  const failed = rows.filter((r) => r.result !== 'PASS');
  say(`chaos: ${rows.length - failed.length} of ${rows.length} passed in ${Math.floor(minutes)} min ${Math.round((minutes % 1) * 60)} s (load average ${load()}); logs in ${runDir}`);
  if (rows.some((r) => r.result === 'ERROR')) return 2;
  return failed.length > 0 ? 1 : 0;
};

process.on('exit', () => {
  resumeAll();
  killServicesNow();
});
const interrupted = (): void => {
  resumeAll();
  void endAllReplicas().then(stopServices).finally(() => process.exit(130));
};
process.once('SIGINT', interrupted);
process.once('SIGTERM', interrupted);

main().then(
  (code) => process.exit(code),
  async (error: unknown) => {
    note(`chaos: ${(error as Error)?.stack ?? String(error)}`);
    resumeAll();
    await endAllReplicas();
    await stopServices();
    process.exit(2);
  },
);
