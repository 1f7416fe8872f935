/**
 * Hostile input aimed at the fleet itself, two replicas (docs/design.md "Any record, any id"):
 * - poison-records: 300 records whose headers are built to hurt — `__proto__` beside a forged
 *   `sluice-*` header (the record that once made every replica exit 3), `constructor` and
 *   `toString` names, empty and non-UTF-8 names, null values, names repeated and interleaved, one
 *   record with 20,000 headers — among a steady producer at 0.5× its quota: every record once
 *   downstream or dead-lettered, both replicas up, /healthz answering within 1 s throughout,
 *   the steady producer's messages each downstream within 2 s;
 * - shared-channel: the replicas' `late-releases` channel flooded with entries no replica sent
 *   (slots a day ahead, numbers past what a timer holds, NaN, non-JSON, a 1 MB message) while a
 *   producer with a 200-character id, checked against a ten-star glob it does not match, is
 *   backlogged at 3×: its busiest second stays within 1.15 × rate + a slot per replica and it
 *   uses its quota as when the channel is quiet (≥ 95 % while backlogged), the entries are ignored
 *   and counted.
 */
import Redis from 'ioredis';
import { Kafka, logLevel, Partitioners } from 'kafkajs';
import { busiestBound, judgeAll, Offered, offerLoad, readOutcome } from '../../test/integration/retry/backlog-fixture';
import type { Header } from '../../src/headers/header-list';
import { sleep } from './faults';
import { fmtLive, fmtSettled, fmtTotals, mergeOffered, open, replicas, Scenario, settle, Settled, TIER_SETTINGS, totals, up } from './harness';
import { metricSum, metricsText } from './probes';
import { watchHealth } from './scenarios-input';
import { RATE } from './scenarios-stop';

const TWO = 2;
const POISON = 300;
const WIDE = 20_000;
const STEADY_MAX_MS = 2_000;

const b = (text: string): Buffer => Buffer.from(text);

/** Record `i`'s headers: every shape a client can write that once hurt or could. */
const poisonHeaders = (i: number): Header[] => {
  const id = { key: b('producer-id'), value: b(`poison-${i % 3}`) };
  switch (i % 6) {
    case 0: return [{ key: b('__proto__'), value: b('x') }, { key: b('sluice-attempt'), value: b('1') }, id];
    case 1: return [{ key: b('constructor'), value: null }, { key: b('toString'), value: b('') }, { key: b('SLUICE-NOT-BEFORE'), value: b('0') }, id];
    case 2: return [{ key: b(''), value: Buffer.from([0xff, 0x00, 0xfe]) }, { key: Buffer.from([0xff, 0xfe, 0xc0]), value: null }, id];
    case 3: return [{ key: b('a'), value: b('1') }, id, { key: b('b'), value: null }, { key: b('a'), value: b('2') }, { key: b('__proto__'), value: null }];
    case 4: return [{ key: b('hasOwnProperty'), value: b('1') }, { key: b('valueOf'), value: b('2') }, { key: b('sluice-'), value: b('3') }, id];
    default: return i === 5 ? [id, ...Array.from({ length: WIDE }, (_, n) => ({ key: b(n % 2 ? '__proto__' : 'h'), value: n % 3 ? null : b('v') }))] : [id];
  }
};

const sendPoison = async (brokers: string[], topic: string): Promise<Offered> => {
  const kafka = new Kafka({ clientId: 'chaos-poison', brokers, logLevel: logLevel.NOTHING });
  const producer = kafka.producer({ allowAutoTopicCreation: false, createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  const byProducer: Offered['byProducer'] = new Map();
  const startedAt = Date.now();
  try {
    for (let i = 0; i < POISON; i += 20) {
      const batch = Array.from({ length: Math.min(20, POISON - i) }, (_, n) => i + n);
      // The headers go as a list (the patched encoder writes it as it is: names as bytes, in order).
      await producer.send({ topic, acks: -1, messages: batch.map((n) => ({ key: `poison-${n}`, value: `poison:${n}`, headers: poisonHeaders(n) as never })) });
      const at = Date.now();
      for (const n of batch) byProducer.set('poison', [...(byProducer.get('poison') ?? []), { value: `poison:${n}`, key: `poison-${n}`, at }]);
      await sleep(100);
    }
  } finally {
    await producer.disconnect();
  }
  return { byProducer, startedAt, endedAt: Date.now() };
};

export const poisonRecords: Scenario = {
  name: 'poison-records',
  what: `${POISON} records with headers built to hurt (one with ${WIDE} headers) beside a steady producer, ${TWO} replicas`,
  async run(ctx) {
    const quotas = `default:\n  rate: ${RATE}/s\n  queue: 60s\nproducers:\n  "poison-*": { unlimited: true }\n`;
    const s = await open(ctx, { quotas, settings: TIER_SETTINGS, partitions: 2 });
    const running = await replicas(s, TWO);
    const reader = await readOutcome(ctx.kafka, s);
    const health = running.map((r) => watchHealth(r.port));
    const loading = offerLoad(ctx.brokers, s.ingress, [{ id: 'steady', perSecond: RATE / 2, seconds: 8, keys: 2 }]);
    await sleep(1_000);
    const poison = await sendPoison(ctx.brokers, s.ingress);
    const steady = await loading;
    const offered = mergeOffered(steady, poison);
    const unreadable: number[] = [];
    let probed: { probes: number; failed: number; slowest: number }[] = [];
    const st = await settle(ctx, s, reader, offered, running, offered.startedAt + 120_000, async () => {
      probed = await Promise.all(health.map((h) => h.stop())); // before the replicas are stopped
      for (const r of running) unreadable.push(metricSum(await metricsText(r.port).catch(() => ''), 'sluice_unreadable_records_total'));
    });
    const js = judgeAll(offered, st.outcome, () => RATE);
    const t = totals(js);
    const sentAt = new Map([...offered.byProducer.values()].flat().map((o) => [o.value, o.at]));
    const steadyWorst = Math.max(0, ...st.outcome.forwarded.filter((o) => o.producer === 'steady').map((o) => o.appendMs - (sentAt.get(o.value) ?? o.appendMs)));
    const failedProbes = probed.reduce((n, p) => n + p.failed, 0);
    return [{
      scenario: 'poison-records',
      invariant: `lost 0, duplicates 0; both replicas up; /healthz within 1 s throughout; steady each downstream within ${STEADY_MAX_MS} ms`,
      measured: `lost ${t.lost}; duplicates ${t.duplicates}; ${fmtLive(st.live)}; health probes failed ${failedProbes} of ${probed.reduce((n, p) => n + p.probes, 0)} (slowest ${Math.max(...probed.map((p) => p.slowest))} ms); steady worst ${steadyWorst} ms`,
      pass: t.lost === 0 && t.duplicates === 0 && st.live.every(up) && failedProbes === 0 && steadyWorst <= STEADY_MAX_MS,
      dir: s.dir,
      details: [`${fmtTotals(t)}; sluice_unreadable_records_total ${unreadable.join(', ')}`, fmtSettled(st)],
    }];
  },
};

/** A 200-character id with dashes that a ten-star glob ending in `-eu` scans and does not match. */
const LONG_ID = 'x-'.repeat(99) + 'us';
const GLOB = '*-*-*-*-*-*-*-*-*-*-eu';

/** Entries no replica sent: `[producer, spacingMs, slot, sent]` with numbers chosen to hurt. */
const junk = (now: number): string[] => [
  JSON.stringify({ from: 'intruder', late: [[LONG_ID, 50, now + 86_400_000, now]] }),
  JSON.stringify({ from: 'intruder', late: [[LONG_ID, 50, now + 2 ** 40, now], [LONG_ID, 1e300, now, now], [LONG_ID, -1, now, now]] }),
  JSON.stringify({ from: 'intruder', late: [[LONG_ID, 50, now, now + 3_600_000], ['y'.repeat(10_000), 50, now, now]] }),
  JSON.stringify({ from: 'intruder', late: Array.from({ length: 5_000 }, () => [LONG_ID, 50, now + 60_000, now]) }),
  '{"from": "intruder", "late": [[',
  JSON.stringify({ from: 'intruder', late: [['z', 50, now, now]], pad: 'p'.repeat(1024 * 1024) }),
];

export const sharedChannel: Scenario = {
  name: 'shared-channel',
  what: `the late-releases channel flooded with forged entries while a producer with a 200-character id (a ten-star glob in the quota file) is backlogged at 3×, ${TWO} replicas`,
  async run(ctx) {
    const quotas = `default:\n  rate: ${RATE}/s\n  queue: 60s\nproducers:\n  "${GLOB}": { rate: 1/s }\n`;
    const s = await open(ctx, { quotas, settings: TIER_SETTINGS, partitions: 2 });
    const running = await replicas(s, TWO);
    const reader = await readOutcome(ctx.kafka, s);
    const redis = new Redis(s.env.SLUICE_REDIS_URL as string, { lazyConnect: true, maxRetriesPerRequest: 2 });
    await redis.connect();
    let published = 0;
    let flooding = true;
    const flood = (async () => {
      while (flooding) {
        // The store's clock: what the replicas compare slots with.
        const [seconds, micros] = await redis.time();
        const now = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
        for (const message of junk(now)) {
          await redis.publish(`${s.env.SLUICE_REDIS_KEY_PREFIX}late-releases`, message);
          published += 1;
        }
        await sleep(200);
      }
    })();
    let ignored = 0;
    let st: Settled;
    let offered: Offered;
    try {
      offered = await offerLoad(ctx.brokers, s.ingress, [{ id: LONG_ID, perSecond: 3 * RATE, seconds: 8, keys: 3 }]);
      st = await settle(ctx, s, reader, offered, running, offered.startedAt + 150_000, async () => {
        flooding = false;
        for (const r of running) ignored += metricSum(await metricsText(r.port).catch(() => ''), 'sluice_late_releases_ignored_total');
      });
    } finally {
      flooding = false;
      await flood.catch(() => undefined);
      redis.disconnect();
    }
    const [j] = judgeAll(offered, st.outcome, () => RATE);
    if (j === undefined) throw new Error('no judgement');
    const bound = busiestBound(RATE, TWO);
    const t = totals([j]);
    return [{
      scenario: 'shared-channel',
      invariant: `lost 0, duplicates 0; both replicas up; busiest second ≤ ${bound} (1.15 × ${RATE}/s + ${TWO}); quota used while backlogged ≥ 95 %; forged entries ignored and counted`,
      measured: `lost ${t.lost}; duplicates ${t.duplicates}; ${fmtLive(st.live)}; busiest second ${j.busiest1s}; quota used ${j.quotaUsedPct.toFixed(1)} % over ${(j.backloggedMs / 1000).toFixed(1)} s; ${published} forged messages published, sluice_late_releases_ignored_total ${ignored}`,
      pass: t.lost === 0 && t.duplicates === 0 && st.live.every(up) && j.busiest1s <= bound && j.quotaUsedPct >= 95 && ignored > 0,
      dir: s.dir,
      details: [fmtTotals(t), fmtSettled(st)],
    }];
  },
};
