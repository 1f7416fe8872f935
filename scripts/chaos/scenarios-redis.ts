/**
 * Redis trouble under load:
 * - flushall: FLUSHALL while a backlog is held and parked (one replica): every bucket starts
 *   empty again; nothing may be lost or sent twice; the busiest second is printed (README: with
 *   the state lost a producer may send one extra queue's worth on top of its rate);
 * - redis-pause: Redis SIGSTOPped for 8 s under each limiter.onStoreError policy (local, park,
 *   forward: one scenario and replica each, all three under the same pause), `steady` at 1.5×
 *   quota and `calm` at 0.5× for 10 s: nothing lost or sent twice, every replica still up.
 */
import {
  BacklogScenario, busiestBound, judgeAll, Offered, offerLoad, OutcomeReader, readOutcome, Replica, tierRecords,
} from '../../test/integration/retry/backlog-fixture';
import { flushAll, pauseFor, sleep } from './faults';
import {
  fmtLive, fmtSettled, fmtTotals, forwardsPer, longestWaits, open, quotaFile, replicas, Scenario, settle, Settled, TIER_SETTINGS, totals, up, Verdict, waitParked,
} from './harness';
import { metricSum, metricsText } from './probes';
import { backlogLoad, RATE } from './scenarios-stop';

export const flushall: Scenario = {
  name: 'flushall',
  what: 'Redis FLUSHALL under a held and parked backlog',
  async run(ctx) {
    const s = await open(ctx, { quotas: quotaFile(RATE, '60s'), settings: TIER_SETTINGS, partitions: 2 });
    const running = await replicas(s, 1);
    const reader = await readOutcome(ctx.kafka, s);
    const loading = offerLoad(ctx.brokers, s.ingress, backlogLoad());
    const loadFrom = Date.now();
    const parked = await waitParked(ctx.kafka, s, 20, 15_000);
    const flushedAt = Date.now();
    await flushAll(ctx.services.redisUrl);
    const offered = await loading;
    const st = await settle(ctx, s, reader, offered, running, offered.startedAt + 90_000);
    const js = judgeAll(offered, st.outcome, () => RATE);
    const t = totals(js);
    const queueWorth = 60 * RATE;
    return [{
      scenario: 'flushall',
      invariant: 'lost 0; duplicates 0 (busiest second printed; README bound with the state lost: rate + one queue)',
      measured: `lost ${t.lost}; duplicates ${t.duplicates}; busiest second ${js.map((j) => `${j.id} ${j.busiest1s}`).join(', ')} (at ${RATE}/s)`,
      pass: t.lost === 0 && t.duplicates === 0,
      dir: s.dir,
      details: [
        `FLUSHALL ${((flushedAt - loadFrom) / 1000).toFixed(1)} s into the load with ${parked} records parked; ${fmtTotals(t)}`,
        `busiest-second bounds: 1.15 × rate + 1 slot = ${busiestBound(RATE, 1)} with the state kept; rate + queue (60s × ${RATE}/s) = ${RATE + queueWorth} with it lost`,
        `${fmtSettled(st)}; replica ${fmtLive(st.live)}`,
      ],
    }];
  },
};

const POLICIES = ['local', 'park', 'forward'] as const;
const PAUSE_MS = 8_000;

interface PolicyRun {
  policy: (typeof POLICIES)[number];
  s: BacklogScenario;
  running: Replica[];
  reader: OutcomeReader;
  offered?: Offered;
  settled?: Settled;
  storeErrors?: number;
  tiers?: Record<string, number>;
}

export const redisPause: Scenario = {
  name: 'redis-pause',
  what: `Redis SIGSTOPped ${PAUSE_MS / 1000} s under load, once per limiter.onStoreError policy (local, park, forward), all three at once`,
  async run(ctx) {
    const runs: PolicyRun[] = [];
    for (const policy of POLICIES) {
      const s = await open(ctx, { quotas: quotaFile(RATE, '60s'), settings: { ...TIER_SETTINGS, SLUICE_ON_STORE_ERROR: policy }, partitions: 2 });
      const running = await replicas(s, 1);
      runs.push({ policy, s, running, reader: await readOutcome(ctx.kafka, s) });
    }
    const load = [
      { id: 'steady', perSecond: 1.5 * RATE, seconds: 10, keys: 3 },
      { id: 'calm', perSecond: RATE / 2, seconds: 10 },
    ];
    const loading = Promise.all(runs.map(async (r) => {
      r.offered = await offerLoad(ctx.brokers, r.s.ingress, load);
    }));
    await sleep(2_000);
    const pause = await pauseFor(ctx.services.redis, PAUSE_MS);
    await loading;
    await Promise.all(runs.map(async (r) => {
      const offered = r.offered as Offered;
      r.settled = await settle(ctx, r.s, r.reader, offered, r.running, offered.startedAt + 90_000, async () => {
        r.storeErrors = metricSum(await metricsText(r.running[0]?.port as number).catch(() => ''), 'sluice_store_errors_total');
      });
      r.tiers = await tierRecords(ctx.kafka, r.s).catch(() => ({}));
    }));
    return runs.map((r): Verdict => {
      const st = r.settled as Settled;
      const offered = r.offered as Offered;
      const js = judgeAll(offered, st.outcome, () => RATE);
      const t = totals(js);
      const during = st.outcome.forwarded.filter((o) => o.appendMs >= pause.from && o.appendMs < pause.to).length;
      return {
        scenario: `redis-pause/${r.policy}`,
        invariant: 'lost 0; duplicates 0; replica up after (/healthz 200)',
        measured: `lost ${t.lost}; duplicates ${t.duplicates}; ${fmtLive(st.live)}; forwarded during the pause ${during}; longest wait ${longestWaits(offered, st.outcome)}`,
        pass: t.lost === 0 && t.duplicates === 0 && st.live.every(up),
        dir: r.s.dir,
        details: [
          `paused ${((pause.from - offered.startedAt) / 1000).toFixed(1)}–${((pause.to - offered.startedAt) / 1000).toFixed(1)} s into the load; ${fmtTotals(t)}; store errors ${r.storeErrors ?? 'n/a'}`,
          `busiest second ${js.map((j) => `${j.id} ${j.busiest1s}`).join(', ')} (quota ${RATE}/s); quota used while backlogged ${js.map((j) => `${j.id} ${Number.isNaN(j.quotaUsedPct) ? 'n/a' : `${j.quotaUsedPct.toFixed(0)}%`}`).join(', ')}; ${fmtSettled(st)}`,
          `forwarded from the load's start ${forwardsPer(st.outcome, offered.startedAt)}; tier records ${JSON.stringify(r.tiers ?? {})}`,
        ],
      };
    });
  },
};
