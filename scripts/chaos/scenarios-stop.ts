/**
 * Replicas stopped under a backlog that goes through the retry tiers (quota 20/s, queue 60s,
 * tiers 1s,5s, hold.maxMs 5000; `busy` offers 3× for 6 s over 6 keys, `calm` 0.5×):
 * - sigterm: both of two replicas SIGTERMed together once ≥ 20 records were parked, one restarted;
 * - sigkill: one of two replicas SIGKILLed at the same point; the other takes over.
 */
import { busiestBound, judgeAll, offerLoad, readOutcome } from '../../test/integration/retry/backlog-fixture';
import {
  duplicateDetails, fmtBound, fmtLive, fmtSettled, fmtTotals, inFlightBound, open, quotaFile, replicas, Scenario, settle, TIER_SETTINGS, totals, up, waitParked,
} from './harness';

export const RATE = 20;
export const backlogLoad = (seconds = 6) => [
  { id: 'busy', perSecond: 3 * RATE, seconds, keys: 6 },
  { id: 'calm', perSecond: RATE / 2, seconds },
];
const busiest = (js: ReturnType<typeof judgeAll>): string => js.map((j) => `${j.id} ${j.busiest1s}`).join(', ');

export const sigterm: Scenario = {
  name: 'sigterm',
  what: 'two replicas SIGTERMed together under a parked backlog, one restarted',
  async run(ctx) {
    const s = await open(ctx, { quotas: quotaFile(RATE, '60s'), settings: TIER_SETTINGS, partitions: 2 });
    const pair = await replicas(s, 2);
    const reader = await readOutcome(ctx.kafka, s);
    const loading = offerLoad(ctx.brokers, s.ingress, backlogLoad());
    const loadFrom = Date.now();
    const parked = await waitParked(ctx.kafka, s, 20, 15_000);
    const signalledAt = Date.now();
    for (const r of pair) r.signal('SIGTERM');
    const exits = await Promise.all(pair.map((r) => r.exit(20_000)));
    const offered = await loading;
    const restarted = await replicas(s, 1);
    const st = await settle(ctx, s, reader, offered, restarted, offered.startedAt + 90_000);
    const js = judgeAll(offered, st.outcome, () => RATE);
    const t = totals(js);
    const exitMs = exits.map((e) => e.at - signalledAt);
    const cleanExits = exits.every((e, i) => e.code === 0 && (exitMs[i] as number) <= 10_000);
    return [{
      scenario: 'sigterm',
      invariant: 'both exit 0 within 10 s; lost 0; duplicates 0',
      measured: `exits ${exits.map((e) => e.code).join(', ')} in ${exitMs.join(', ')} ms; lost ${t.lost}; duplicates ${t.duplicates}`,
      pass: cleanExits && t.lost === 0 && t.duplicates === 0,
      dir: s.dir,
      details: [
        `SIGTERM ${((signalledAt - loadFrom) / 1000).toFixed(1)} s into the load with ${parked} records parked; ${fmtTotals(t)}`,
        `busiest second ${busiest(js)} (bound 1.15 × rate + 1 slot: ${busiestBound(RATE, 1)}); ${fmtSettled(st)}; restarted replica: ${fmtLive(st.live)}`,
      ],
    }];
  },
};

export const sigkill: Scenario = {
  name: 'sigkill',
  what: 'one of two replicas SIGKILLed under a parked backlog',
  async run(ctx) {
    const s = await open(ctx, { quotas: quotaFile(RATE, '60s'), settings: TIER_SETTINGS, partitions: 2 });
    const [victim, survivor] = await replicas(s, 2);
    const reader = await readOutcome(ctx.kafka, s);
    const load = backlogLoad();
    const loading = offerLoad(ctx.brokers, s.ingress, load);
    const loadFrom = Date.now();
    const parked = await waitParked(ctx.kafka, s, 20, 15_000);
    const killedAt = Date.now();
    const killed = await victim.stop('SIGKILL', 5_000);
    const offered = await loading;
    const st = await settle(ctx, s, reader, offered, [survivor], offered.startedAt + 90_000);
    const js = judgeAll(offered, st.outcome, () => RATE);
    const t = totals(js);
    const bound = inFlightBound(load, RATE);
    const ingressRate = load.reduce((n, o) => n + o.perSecond, 0);
    const survived = st.live.every(up);
    return [{
      scenario: 'sigkill',
      invariant: `lost 0; duplicates ≤ ${fmtBound(load, RATE)}; survivor up`,
      measured: `lost ${t.lost}; duplicates ${t.duplicates} (${(t.duplicates / ingressRate).toFixed(2)} s of ingress at ${ingressRate}/s); survivor ${fmtLive(st.live)}`,
      pass: t.lost === 0 && t.duplicates <= bound && survived,
      dir: s.dir,
      details: [
        `SIGKILL ${((killedAt - loadFrom) / 1000).toFixed(1)} s into the load with ${parked} records parked (exit ${killed.code}); ${fmtTotals(t)}`,
        `busiest second ${busiest(js)}; ${duplicateDetails(st.outcome, killedAt, 'the kill')}; ${fmtSettled(st)}`,
      ],
    }];
  },
};
