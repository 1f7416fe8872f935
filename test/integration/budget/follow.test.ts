/**
 * Issue 29, `follow` measured black-box: a budget of 300/s that follows the downstream's consumer
 * group. The downstream's consumer reads at 150/s (paced, committing every 500 ms); two producers
 * offer 150/s each (the whole budget). AIMD (×0.8 a second while the group's lag is above
 * `maxLag`, +5 % of the rate a second below it) must bring what sluice forwards down to about what
 * the consumer reads, and keep the consumer's lag bounded — judged by the downstream topic's broker
 * append times and the group's committed offsets read with an admin client, never by sluice's logs.
 *
 * After the measured window the replicas stop (SIGTERM parks what waits; conservation is proven by
 * downstream-budget.test.ts and the retry suites): a followed budget's backlog would take minutes.
 */
import '../../helpers/processes';
import { loadavg } from 'node:os';
import { createKafka, kafkaBrokers } from '../../helpers/kafka';
import { randomGroupId } from '../../helpers/names';
import { redisUrl } from '../../helpers/redis';
import {
  BacklogScenario, createBacklogScenario, deleteScenarioTopics, endAllReplicas, offerLoad, readOutcome, startReplicas,
} from '../retry/backlog-fixture';

const kafka = createKafka();
const BUDGET = 300;
const READS = 150;
const MAX_LAG = 200;
/**
 * The window judged runs from 15 s (two AIMD cycles from the full budget) to the load's end. What
 * is forwarded in it is what the consumer read plus the lag's change across it, and the first
 * overshoot's lag (337–558 in CI runs) drains at the hold that follows it: over 15 s that change
 * alone moved the mean by up to 35/s (116/s in one CI run on Kafka 4.3.1, the bound 120); over 25 s
 * by about 20.
 */
const LOAD_S = 40;
const scenarios: BacklogScenario[] = [];

afterEach(async () => {
  await endAllReplicas();
  await Promise.all(scenarios.splice(0).map((s) => deleteScenarioTopics(kafka, s)));
});

/** A consumer of the downstream topic that reads `perSecond` messages a second at most, committing every 500 ms. */
const slowConsumer = async (groupId: string, topic: string, perSecond: number) => {
  const consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 100, allowAutoTopicCreation: false, maxBytes: 64 * 1024 });
  await consumer.connect();
  await consumer.subscribe({ topics: [topic], fromBeginning: true });
  let read = 0;
  let started = 0;
  await consumer.run({
    autoCommitInterval: 500,
    eachMessage: async () => {
      if (read === 0) started = Date.now();
      read += 1;
      // The consumer's own pace: message n is done no earlier than n / perSecond after the first.
      const due = started + (read * 1000) / perSecond - Date.now();
      if (due > 0) await new Promise((resolve) => setTimeout(resolve, due));
    },
  });
  return { read: () => read, stop: () => consumer.disconnect() };
};

describe('a budget that follows its downstream consumer group', () => {
  it('settles near what the consumer reads and keeps its lag bounded', async () => {
    const group = randomGroupId('slow');
    const quotas = `total:\n  rate: ${BUDGET}/s\n  follow: { group: ${group}, maxLag: ${MAX_LAG} }\ndefault:\n  rate: 500/s\n`;
    const s = await createBacklogScenario(kafka, {
      brokers: kafkaBrokers().join(','), redisUrl: redisUrl(), partitions: 2, quotas,
      settings: { SLUICE_RETRY_TIERS: '1s,5s', SLUICE_HOLD_MAX_MS: '5000', SLUICE_RETRY_MAX_ATTEMPTS: '100' },
    });
    scenarios.push(s);
    await startReplicas(s, 1);
    const reader = await readOutcome(kafka, s);
    const consumer = await slowConsumer(group, s.downstream, READS);
    const admin = kafka.admin();
    await admin.connect();
    const lags: { at: number; lag: number }[] = [];
    const sample = setInterval(() => {
      void Promise.all([admin.fetchTopicOffsets(s.downstream), admin.fetchOffsets({ groupId: group, topics: [s.downstream] })]).then(([ends, committed]) => {
        const end = ends.reduce((sum, p) => sum + Number(p.high), 0);
        const done = committed[0].partitions.reduce((sum, p) => sum + Math.max(0, Number(p.offset)), 0);
        lags.push({ at: Date.now(), lag: end - done });
      }, () => undefined);
    }, 500);
    try {
      const offered = await offerLoad(kafkaBrokers(), s.ingress, ['a', 'b'].map((id) => ({ id, perSecond: BUDGET / 2, seconds: LOAD_S, keys: 4 })));
      const outcome = await reader.finish();
      const t0 = offered.startedAt;
      // Settled: from 15 s to the end of the load (LOAD_S says why it is that long).
      const [from, to] = [t0 + 15_000, offered.endedAt];
      const forwarded = outcome.forwarded.filter((o) => o.appendMs >= from && o.appendMs < to).length;
      const rate = (forwarded * 1000) / (to - from);
      const settledLags = lags.filter((l) => l.at >= from && l.at < to).map((l) => l.lag);
      const maxLag = Math.max(...settledLags);
      const perSecond: string[] = [];
      for (let t = t0; t < to; t += 1000) perSecond.push(String(outcome.forwarded.filter((o) => o.appendMs >= t && o.appendMs < t + 1000).length));
      process.stderr.write(`\n[follow] budget ${BUDGET}/s following a consumer at ${READS}/s, maxLag ${MAX_LAG} (load average ${loadavg().map((x) => x.toFixed(2)).join(' ')})\n`
        + `  forwarded per second: ${perSecond.join(' ')}\n`
        + `  settled ${((to - from) / 1000).toFixed(1)} s: ${rate.toFixed(1)}/s forwarded; the consumer's lag at most ${maxLag} (samples: ${settledLags.join(' ')}); ${consumer.read()} read\n`);
      expect(outcome.deadLettered).toEqual([]);
      expect(settledLags.length).toBeGreaterThan(10);
      // AIMD oscillates around what the consumer reads (×0.8 down, +15/s up): its mean within 20 %.
      expect(rate).toBeGreaterThan(READS * 0.8);
      expect(rate).toBeLessThan(READS * 1.2);
      // The lag stays near maxLag: above it the budget shrinks within a second, below it grows back by 15/s a second.
      expect(maxLag).toBeLessThan(3 * MAX_LAG);
    } finally {
      clearInterval(sample);
      await consumer.stop();
      await admin.disconnect();
    }
  }, 180_000);
});
