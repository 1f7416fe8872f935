/**
 * Kafka trouble under load:
 * - broker-pause: the broker SIGSTOPped for 10 s while two replicas carry a backlog (`busy` 2×
 *   quota over 4 keys and `calm` 0.5×, 8 s): nothing lost, duplicates within what was in
 *   flight, both replicas still up afterwards, and the outage does not turn into a burst: from
 *   the pause on, no producer gets more than 1.15 × its rate + a slot per replica in any second
 *   of appends (LogAppendTime; issue 28: 76–90 at 20/s, all in the second the broker came back,
 *   before the lanes' outage rule; and 26 in the catch-up some 8 s later, before a message let
 *   through at once that waited counted in the second rule). Judged in two spans, printed apart:
 *   until RECOVERY_MS after the resume (what was stuck in the outage) and later (the catch-up);
 * - topic-deleted: the downstream topic deleted under a running replica and created again
 *   (same name, LogAppendTime) 5 s later, while load goes on: what was sent meanwhile is retried,
 *   never skipped, and /v1/status shows the failing topic in `sendErrors` while it lasts.
 */
import { busiestBound, judgeAll, offerLoad, Outcome, readOutcome } from '../../test/integration/retry/backlog-fixture';
import { deleteTopic, pauseFor, recreateTopic, sleep } from './faults';
import {
  duplicateDetails, everyValue, fmtBound, fmtLive, fmtSettled, fmtTotals, groupViews, inFlightBound, logLines, mergeOffered, once, open, quotaFile, replicas, Scenario, settle, TIER_SETTINGS, totals, up,
} from './harness';
import { v1Status } from './probes';
import { RATE } from './scenarios-stop';

const BROKER_PAUSE_MS = 10_000;
/** How long after the resume the busiest second is judged: what was stuck in the outage has left by then. */
const RECOVERY_MS = 5_000;

/** The most of the sorted times within any 1 s, and when that second began. */
const busiestSecond = (sorted: readonly number[]): { count: number; from: number } => {
  let best = { count: 0, from: Number.NaN };
  for (let lo = 0, hi = 0; hi < sorted.length; hi += 1) {
    while (sorted[hi] - sorted[lo] >= 1000) lo += 1;
    if (hi - lo + 1 > best.count) best = { count: hi - lo + 1, from: sorted[lo] };
  }
  return best;
};

export const brokerPause: Scenario = {
  name: 'broker-pause',
  what: `the Kafka broker SIGSTOPped ${BROKER_PAUSE_MS / 1000} s under a backlog, two replicas`,
  async run(ctx) {
    const s = await open(ctx, { quotas: quotaFile(RATE, '60s'), settings: TIER_SETTINGS, partitions: 2 });
    const running = await replicas(s, 2);
    const reader = await readOutcome(ctx.kafka, s);
    const load = [
      { id: 'busy', perSecond: 2 * RATE, seconds: 8, keys: 4 },
      { id: 'calm', perSecond: RATE / 2, seconds: 8 },
    ];
    const loading = offerLoad(ctx.brokers, s.ingress, load);
    const loadFrom = Date.now();
    await sleep(3_000);
    const beforePause = await groupViews(ctx.kafka, s, running).catch((e: Error) => ({ text: `(group views: ${e.message})` }));
    const pause = await pauseFor(ctx.services.kafka, BROKER_PAUSE_MS);
    const offered = await loading;
    let views = { text: '(no group views)', members: { ingress: 0, tiers: 0 } };
    const st = await settle(ctx, s, reader, offered, running, offered.startedAt + 150_000, async () => {
      views = await groupViews(ctx.kafka, s, running).catch((e: Error) => ({ text: `(group views: ${e.message})`, members: { ingress: 0, tiers: 0 } }));
    });
    const rejoined = views.members.ingress === running.length && views.members.tiers === running.length;
    const js = judgeAll(offered, st.outcome, () => RATE);
    const t = totals(js);
    const bound = inFlightBound(load, RATE);
    // From the pause on: what was released into the outage and the backlog after it, per producer.
    const burstBound = busiestBound(RATE, running.length);
    const appendsOf = (id: string, from: number, to: number): number[] =>
      st.outcome.forwarded.filter((o) => o.producer === id && o.appendMs >= from && o.appendMs < to).map((o) => o.appendMs).sort((a, b) => a - b);
    const afterPause = [...offered.byProducer.keys()].map((id) => ({ id, ...busiestSecond(appendsOf(id, pause.from, pause.to + RECOVERY_MS)) }));
    const later = [...offered.byProducer.keys()].map((id) => ({ id, ...busiestSecond(appendsOf(id, pause.to + RECOVERY_MS, Infinity)) }));
    const burst = Math.max(...afterPause.map((p) => p.count));
    const laterBurst = Math.max(...later.map((p) => p.count));
    // What made the busiest later second: by downstream partition (the key's, as on ingress: its owner) and whether it came back from a tier.
    const makeup = (id: string, from: number): string => {
      const inIt = st.outcome.forwarded.filter((o) => o.producer === id && o.appendMs >= from && o.appendMs < from + 1000);
      const by = (f: (o: Outcome['forwarded'][number]) => string): string => [...inIt.reduce((m, o) => m.set(f(o), (m.get(f(o)) ?? 0) + 1), new Map<string, number>())].map(([k, n]) => `${k} ${n}`).join(', ');
      return `${by((o) => `p${o.partition}`)}; ${by((o) => `attempt ${o.attempt}`)}; waited ${Math.min(...inIt.map((o) => o.waitedMs ?? 0))}–${Math.max(...inIt.map((o) => o.waitedMs ?? 0))} ms`;
    };
    const commitFailures = running.map((r, i) => {
      const l = logLines(r, 'offset commit failed');
      return `replica ${i + 1} ${l.count}${l.last ? ` (last ${l.last.slice(11, 23)}, resumed ${new Date(pause.to).toISOString().slice(11, 23)})` : ''}`;
    });
    return [{
      scenario: 'broker-pause',
      invariant: `lost 0; duplicates ≤ ${fmtBound(load, RATE)}; both replicas up after (/healthz 200, members of both groups again); busiest second from the pause to ${RECOVERY_MS / 1000} s after it, and later, ≤ ${burstBound} (1.15 × ${RATE}/s + a slot per replica)`,
      measured: `lost ${t.lost}; duplicates ${t.duplicates}; replicas ${fmtLive(st.live)}; group members ingress ${views.members.ingress}/${running.length}, tiers ${views.members.tiers}/${running.length}; busiest second from the pause to ${RECOVERY_MS / 1000} s after it ${burst}, later ${laterBurst} at ${RATE}/s`,
      pass: t.lost === 0 && t.duplicates <= bound && st.live.every(up) && rejoined && burst <= burstBound && laterBurst <= burstBound,
      dir: s.dir,
      details: [
        `paused ${((pause.from - loadFrom) / 1000).toFixed(1)}–${((pause.to - loadFrom) / 1000).toFixed(1)} s into the load (the load's own sends waited too; it ended after ${((offered.endedAt - offered.startedAt) / 1000).toFixed(1)} s); ${fmtTotals(t)}`,
        `busiest second over the whole run ${js.map((j) => `${j.id} ${j.busiest1s}`).join(', ')}, from the pause to ${RECOVERY_MS / 1000} s after it ${afterPause.map((p) => `${p.id} ${p.count} (from ${((p.from - pause.to) / 1000).toFixed(1)} s after the resume)`).join(', ')}, later ${later.map((p) => `${p.id} ${p.count} (${((p.from - pause.to) / 1000).toFixed(1)} s${p.count > 0 ? `: ${makeup(p.id, p.from)}` : ''})`).join(', ')} (quota ${RATE}/s); ${duplicateDetails(st.outcome, pause.to, 'the resume')}; ${fmtSettled(st)}`,
        `before the pause: ${beforePause.text}`,
        `before the stop: ${views.text}`,
        `failed offset commits logged: ${commitFailures.join(', ')}`,
      ],
    }];
  },
};

/**
 * The topic is gone ~10 s; while it is, /v1/status must say so within REPORT_WITHIN_MS (sends to
 * it start at once; the producer does not retry inside kafkajs, so the first failure shows).
 */
const GAP_MS = 10_000;
const REPORT_WITHIN_MS = 3_000;

export const topicDeleted: Scenario = {
  name: 'topic-deleted',
  what: `the downstream topic deleted under load and created again ${GAP_MS / 1000} s later`,
  async run(ctx) {
    const s = await open(ctx, { quotas: quotaFile(RATE, '60s'), settings: TIER_SETTINGS, partitions: 2 });
    const [replica] = await replicas(s, 1);
    if (replica === undefined) throw new Error('no replica');
    // Before: everything read off the old topic before it goes (its records go with it).
    const reader1 = await readOutcome(ctx.kafka, s);
    const before = await offerLoad(ctx.brokers, s.ingress, [
      { id: 'before-a', perSecond: 8, seconds: 3 }, { id: 'before-b', perSecond: 8, seconds: 3, keys: 3 },
    ]);
    const beforeRead = await reader1.accounted(everyValue(before), Date.now() + 30_000);
    const out1 = once(await reader1.finish());
    // The gap: sends to the deleted topic must be retried, and reported while they fail.
    let polling = true;
    const seen: { at: number; failures: number; code: string }[] = [];
    const poll = (async () => {
      while (polling) {
        const failing = (await v1Status(replica.adminPort))?.sendErrors?.find((e) => e.destination === s.downstream);
        if (failing) seen.push({ at: Date.now(), failures: failing.failures, code: failing.code });
        await sleep(250);
      }
    })();
    const deletedAt = Date.now();
    await deleteTopic(ctx.kafka, s.downstream);
    const during = offerLoad(ctx.brokers, s.ingress, [
      { id: 'during-a', perSecond: 8, seconds: 10 }, { id: 'during-b', perSecond: 8, seconds: 10, keys: 3 },
    ]);
    await sleep(Math.max(0, deletedAt + GAP_MS - Date.now()));
    const attempts = await recreateTopic(ctx.kafka, s.downstream, 1, [{ name: 'message.timestamp.type', value: 'LogAppendTime' }]);
    const recreatedAt = Date.now();
    const reader2 = await readOutcome(ctx.kafka, s);
    const duringOffered = await during;
    const st = await settle(ctx, s, reader2, duringOffered, [replica], duringOffered.startedAt + 90_000, async () => {
      // `sendErrors` clears at the first send that succeeds again.
      await sleep(500);
      polling = false;
      await poll;
    });
    const lastSeen = seen[seen.length - 1];
    const outcome: Outcome = { forwarded: [...out1.forwarded, ...st.outcome.forwarded], deadLettered: st.outcome.deadLettered };
    const offered = mergeOffered(before, duringOffered);
    const js = judgeAll(offered, outcome, () => RATE);
    const t = totals(js);
    const firstMs = seen[0] === undefined ? undefined : seen[0].at - deletedAt;
    const reported = firstMs !== undefined && firstMs <= REPORT_WITHIN_MS && (lastSeen?.at ?? 0) >= recreatedAt - 1_000;
    return [{
      scenario: 'topic-deleted',
      invariant: `lost 0 (sent meanwhile: retried, never skipped); /v1/status sendErrors names the topic while it lasts (from ≤ ${REPORT_WITHIN_MS / 1000} s after the delete until it is back)`,
      measured: `lost ${t.lost}; duplicates ${t.duplicates}; sendErrors ${firstMs === undefined ? 'never seen' : `seen ${((firstMs) / 1000).toFixed(1)}–${(((lastSeen?.at ?? 0) - deletedAt) / 1000).toFixed(1)} s after the delete (${lastSeen?.code}, ${lastSeen?.failures} failure(s))`}, topic back after ${((recreatedAt - deletedAt) / 1000).toFixed(1)} s; replica ${fmtLive(st.live)}`,
      pass: t.lost === 0 && reported && beforeRead,
      dir: s.dir,
      details: [
        `deleted just before the second load (10 s at 16/s), created again after ${((recreatedAt - deletedAt) / 1000).toFixed(1)} s (attempt ${attempts}); ${fmtTotals(t)}`,
        `before the delete all read off the old topic: ${beforeRead}; ${fmtSettled(st)}; dead-lettered ${st.outcome.deadLettered.length}`,
      ],
    }];
  },
};
