/**
 * Group membership under trouble (issue 28), each fault repeated CHAOS_REPEAT times (default 20):
 * - broker-pause-rejoin: the broker SIGSTOPped 8–14 s (around a session timeout: the broker drops
 *   some members, keeps others; the moment varies) while two replicas carry a steady load; after every resume every
 *   consumer (both replicas, both groups) must be back in its group, the group Stable, within a
 *   session timeout — kafkajs rejoins by itself, or sluice's watchdog (src/flow/group-consumer.ts)
 *   disconnects and runs the consumer again; nothing lost over the whole run;
 * - rebalance-stopped-owner: a replica carrying a backlog is SIGSTOPped for 1–2 s (CHAOS_STOP_MS) the moment it
 *   logs its join of the rebalance a new replica causes (its partitions lost being parked and
 *   committed), then SIGTERMed once the new one is ready, which carries on into the next round:
 *   no message is forwarded twice (the hand-off fences, src/flow/handoff-fence.ts), none lost;
 * - budget-churn: three producers ask for 1.2× a contended `total:` budget, so their messages wait
 *   in memory in the budget's lines and are decided again every 100 ms, while a replica joins and
 *   the oldest leaves (SIGTERM) every round: what waits or is out being decided again when a
 *   partition goes is parked (src/flow/dispatch.ts), so nothing is lost or forwarded twice, and the
 *   replicas together stay within 1.05 × the budget + a slot per replica in any second.
 */
import { readFileSync, watch } from 'node:fs';
import { judgeAll, maxInWindow, offerLoad, readOutcome, Replica, startReplica } from '../../test/integration/retry/backlog-fixture';
import { pauseFor, pauseGroup, resumeGroup, sleep } from './faults';
import { behindEnd, duplicateDetails, fmtLive, fmtSettled, fmtTotals, open, quotaFile, replicas, Scenario, settle, tiersOf, TIER_SETTINGS, totals, up } from './harness';
import { healthz } from './probes';
import { RATE } from './scenarios-stop';

const REPEAT = Number(process.env.CHAOS_REPEAT ?? 20);
/** sluice's consumer session timeout (src/flow/group-consumer.ts CONSUMER_SETTINGS). */
const SESSION_MS = 10_000;
/** CHAOS_PAUSE_MS=12000-14000: another range of pauses (the longer ones fence the broker from its own controller more often). */
const PAUSE_MS = (process.env.CHAOS_PAUSE_MS?.split('-').map(Number) ?? [8_000, 14_000]) as [number, number];
/** CHAOS_STOP_MS=2000-2400: how long rebalance-stopped-owner freezes the old owner (past 2 s its wait for its writes has run out when it wakes). */
const STOP_MS = (process.env.CHAOS_STOP_MS?.split('-').map(Number) ?? [1_000, 2_000]) as [number, number];
/** A scenario of 20 rounds outlasts the suite's 4 minutes per scenario. */
const TIMEOUT_MS = 30 * 60_000;

const fmtMs = (ms: readonly number[]): string => {
  const sorted = [...ms].sort((a, b) => a - b);
  return sorted.length === 0 ? 'none' : `median ${((sorted[Math.floor(sorted.length / 2)] as number) / 1000).toFixed(1)} s, max ${((sorted[sorted.length - 1] as number) / 1000).toFixed(1)} s`;
};

/** Member count and state of each group, as the broker sees them. */
const groupsNow = async (ctx: Parameters<Scenario['run']>[0], ids: string[]): Promise<{ members: number; state: string }[]> => {
  const admin = ctx.kafka.admin();
  await admin.connect();
  try {
    const { groups } = await admin.describeGroups(ids);
    return ids.map((id) => {
      const g = groups.find((x) => x.groupId === id);
      return { members: g?.members.length ?? 0, state: g?.state ?? 'Unknown' };
    });
  } finally {
    await admin.disconnect();
  }
};

export const brokerPauseRejoin: Scenario = {
  name: 'broker-pause-rejoin',
  what: `the broker SIGSTOPped ${PAUSE_MS[0] / 1000}–${PAUSE_MS[1] / 1000} s, ${REPEAT} times, two replicas: every consumer back in its group within a session timeout`,
  timeoutMs: TIMEOUT_MS,
  async run(ctx) {
    const s = await open(ctx, { quotas: quotaFile(RATE, '60s'), settings: TIER_SETTINGS, partitions: 2 });
    const running = await replicas(s, 2);
    const groups = [s.env.SLUICE_GROUP_ID as string, s.env.SLUICE_RETRY_GROUP_ID as string];
    const reader = await readOutcome(ctx.kafka, s);
    const roundMs = PAUSE_MS[1] + SESSION_MS + 4_000;
    const loading = offerLoad(ctx.brokers, s.ingress, [{ id: 'steady', perSecond: RATE / 2, seconds: Math.ceil((REPEAT * roundMs) / 1000) + 5, keys: 3 }]);
    const backMs: number[] = [];
    const late: string[] = [];
    const unhealthy: string[] = [];
    for (let round = 1; round <= REPEAT; round += 1) {
      await sleep(2_000);
      const pauseMs = PAUSE_MS[0] + Math.round(Math.random() * (PAUSE_MS[1] - PAUSE_MS[0]));
      const { to } = await pauseFor(ctx.services.kafka, pauseMs);
      let back: number | undefined;
      let last = '';
      while (back === undefined && Date.now() < to + 60_000) {
        const now = await groupsNow(ctx, groups).catch((e: Error) => [{ members: -1, state: e.message }]);
        last = now.map((g) => `${g.members} ${g.state}`).join(', ');
        if (now.every((g) => g.members === running.length && g.state === 'Stable')) back = Date.now() - to;
        else await sleep(250);
      }
      const health = await Promise.all(running.map((r) => healthz(r.port)));
      if (health.some((h) => h !== 200)) unhealthy.push(`round ${round}: /healthz ${health.join(', ')}`);
      if (back === undefined || back > SESSION_MS) late.push(`round ${round}: ${back === undefined ? `not back after 60 s (${last})` : `${(back / 1000).toFixed(1)} s`}`);
      if (back !== undefined) backMs.push(back);
      ctx.note(`broker-pause-rejoin round ${round} (paused ${(pauseMs / 1000).toFixed(1)} s): ${back === undefined ? 'NOT back' : `back after ${(back / 1000).toFixed(1)} s`}`);
      if (back === undefined) break;
      await sleep(Math.max(0, SESSION_MS - (back ?? 0)));
    }
    const offered = await loading;
    const st = await settle(ctx, s, reader, offered, running, Date.now() + 90_000);
    const t = totals(judgeAll(offered, st.outcome, () => RATE));
    const rejoins = running.map((r) => readFileSync(r.log, 'utf8').split('\n').filter((l) => l.includes('the consumer is out of its group')).length);
    return [{
      scenario: 'broker-pause-rejoin',
      invariant: `${REPEAT} pauses of ${PAUSE_MS[0] / 1000}–${PAUSE_MS[1] / 1000} s: after each, every consumer back in its group (both groups Stable with ${running.length} members) within a session timeout (${SESSION_MS / 1000} s), /healthz 200; lost 0`,
      measured: `back after ${fmtMs(backMs)} (${backMs.length} of ${REPEAT} rounds measured); late ${late.length}; not healthy ${unhealthy.length}; lost ${t.lost}; watchdog rejoins ${rejoins.join(', ')}`,
      pass: backMs.length === REPEAT && late.length === 0 && unhealthy.length === 0 && t.lost === 0,
      dir: s.dir,
      details: [...late, ...unhealthy, fmtTotals(t), duplicateDetails(st.outcome, offered.startedAt, 'the load started'), fmtSettled(st), `replicas ${fmtLive(st.live)}`],
    }];
  },
};

/** The ingress flow's "joined the group" lines of a replica (sync log writes: there once logged). */
const ingressJoins = (r: Replica): number =>
  readFileSync(r.log, 'utf8').split('\n').filter((l) => l.includes('"msg":"joined the group"') && l.includes('"component":"ingress"')).length;

export const rebalanceStoppedOwner: Scenario = {
  name: 'rebalance-stopped-owner',
  what: `a replica SIGSTOPped ${STOP_MS[0] / 1000}–${STOP_MS[1] / 1000} s at its join of the rebalance a new replica causes, ${REPEAT} times: no message forwarded twice`,
  timeoutMs: TIMEOUT_MS,
  async run(ctx) {
    const settings = { ...TIER_SETTINGS, SLUICE_LOG_LEVEL: 'info' };
    const s = await open(ctx, { quotas: quotaFile(RATE, '60s'), settings, partitions: 2 });
    let [current] = await replicas(s, 1);
    const reader = await readOutcome(ctx.kafka, s);
    // 1.2× its quota: always something held (and parked past hold.maxMs) at a join, and a backlog
    // that stays within the queue (grows 4/s: 48 s after 240 s).
    const load = [
      { id: 'busy', perSecond: 1.2 * RATE, seconds: REPEAT * 12, keys: 4 },
      { id: 'calm', perSecond: RATE / 2, seconds: REPEAT * 12 },
    ];
    const loading = offerLoad(ctx.brokers, s.ingress, load);
    await sleep(4_000);
    const rounds: string[] = [];
    const stops: number[] = [];
    for (let round = 1; round <= REPEAT && current; round += 1) {
      const old: Replica = current;
      const before = ingressJoins(old);
      let stoppedAt: number | undefined;
      const watcher = watch(old.log, () => {
        if (stoppedAt !== undefined || ingressJoins(old) <= before) return;
        pauseGroup(old.pid);
        stoppedAt = Date.now();
      });
      const stopMs = STOP_MS[0] + Math.round(Math.random() * (STOP_MS[1] - STOP_MS[0]));
      let next: Replica | undefined;
      try {
        next = await startReplica(s);
        const deadline = Date.now() + 60_000;
        while (stoppedAt === undefined && Date.now() < deadline) await sleep(5);
        if (stoppedAt !== undefined) await sleep(Math.max(0, stoppedAt + stopMs - Date.now()));
      } finally {
        watcher.close();
        resumeGroup(old.pid);
      }
      if (stoppedAt === undefined) {
        rounds.push(`round ${round}: the old owner never logged its join (not stopped)`);
      } else stops.push(stopMs);
      await next.ready(90_000);
      await sleep(2_000);
      const exit = await old.stop('SIGTERM', 15_000);
      if (exit.code !== 0) rounds.push(`round ${round}: the old owner exited ${exit.code}`);
      ctx.note(`rebalance-stopped-owner round ${round}: old owner ${stoppedAt === undefined ? 'not stopped' : `stopped ${stopMs} ms`}, exit ${exit.code}`);
      current = next;
    }
    const offered = await loading;
    const backlogMs = ((load[0].perSecond - RATE) * load[0].seconds * 1000) / RATE;
    const st = await settle(ctx, s, reader, offered, current ? [current] : [], Date.now() + backlogMs + 120_000);
    const t = totals(judgeAll(offered, st.outcome, () => RATE));
    const expired = current ? readFileSync(current.log, 'utf8').split('\n').filter((l) => l.includes('hand-off bound')).length : 0;
    return [{
      scenario: 'rebalance-stopped-owner',
      invariant: `${REPEAT} rebalances with the old owner SIGSTOPped ${STOP_MS[0] / 1000}–${STOP_MS[1] / 1000} s at its join: lost 0; duplicates 0; the last replica up`,
      measured: `stopped in ${stops.length} of ${REPEAT} rounds (${fmtMs(stops)}); lost ${t.lost}; duplicates ${t.duplicates}; last replica ${fmtLive(st.live)}; hand-off waits expired (last replica's log) ${expired}`,
      pass: stops.length === REPEAT && t.lost === 0 && t.duplicates === 0 && st.live.every(up) && rounds.length === 0,
      dir: s.dir,
      details: [...rounds, fmtTotals(t), duplicateDetails(st.outcome, offered.startedAt, 'the load started'), fmtSettled(st)],
    }];
  },
};

/** How many messages carried each `sluice-attempt`, e.g. `10: 140, 11: 9`. */
const fmtAttempts = (outs: readonly { attempt: number }[]): string => {
  const by = new Map<number, number>();
  for (const o of outs) by.set(o.attempt, (by.get(o.attempt) ?? 0) + 1);
  return by.size === 0 ? 'none' : [...by].sort((x, y) => x[0] - y[0]).map(([a, n]) => `${a}: ${n}`).join(', ');
};

/** budget-churn: the budget, and what each of its three producers offers (1.2× the budget together: the backlog stays within their queue). */
const BUDGET = 30;
const BUDGET_PRODUCERS = ['north', 'south', 'west'];
const BUDGET_OFFER = 12;
/** Replicas at once while one joins before the oldest leaves. */
const AT_MOST = 3;

export const budgetChurn: Scenario = {
  name: 'budget-churn',
  what: `three producers at 1.2× a ${BUDGET}/s budget, waiting in its lines, while a replica joins and the oldest leaves, ${REPEAT} times (the load for the first half)`,
  timeoutMs: TIMEOUT_MS,
  async run(ctx) {
    const quotas = `total:\n  rate: ${BUDGET}/s\n${quotaFile(RATE, '60s')}`;
    const settings = { ...TIER_SETTINGS, SLUICE_LOG_LEVEL: 'info' };
    const s = await open(ctx, { quotas, settings, partitions: 4 });
    const running = await replicas(s, 2);
    const reader = await readOutcome(ctx.kafka, s);
    const stopLoad = new AbortController();
    const loading = offerLoad(ctx.brokers, s.ingress, BUDGET_PRODUCERS.map((id) => ({ id, perSecond: BUDGET_OFFER, seconds: 3_600, keys: 3 })), { until: stopLoad.signal });
    const rounds: string[] = [];
    const events: [number, string][] = [];
    try {
      await sleep(5_000);
      for (let round = 1; round <= REPEAT; round += 1) {
        const joined = await startReplica(s);
        running.push(joined);
        await joined.ready(90_000);
        events.push([Date.now(), `${round} joined`]);
        await sleep(3_000);
        events.push([Date.now(), `${round} leaves`]);
        const exit = await (running.shift() as Replica).stop('SIGTERM', 15_000);
        if (exit.code !== 0) rounds.push(`round ${round}: the replica that left exited ${exit.code}`);
        ctx.note(`budget-churn round ${round}: a replica joined, the oldest left (exit ${exit.code} in ${exit.ms} ms)`);
        // The load stops after half the rounds: the rest churn while the lines drain, so the
        // backlog stays within the producers' queue (a rebalance costs the budget about 0.7 s).
        if (round === Math.ceil(REPEAT / 2)) stopLoad.abort();
        await sleep(2_000);
      }
    } finally {
      stopLoad.abort();
    }
    const offered = await loading;
    const lags: string[] = [];
    const st = await settle(ctx, s, reader, offered, running, Date.now() + 240_000, async () => {
      const tiers = await tiersOf(ctx.kafka, s);
      lags.push(...(await behindEnd(ctx.kafka, s.env.SLUICE_GROUP_ID as string, [s.ingress])), ...(await behindEnd(ctx.kafka, s.env.SLUICE_RETRY_GROUP_ID as string, tiers)));
    });
    const t = totals(judgeAll(offered, st.outcome, () => BUDGET / BUDGET_PRODUCERS.length));
    const appends = st.outcome.forwarded.map((o) => o.appendMs).sort((a, b) => a - b);
    const busiest = maxInWindow(appends, 1000);
    const bound = Math.floor(1.05 * BUDGET + AT_MOST);
    // Used while the load ran (its first 10 s aside: the lines fill and the shares settle).
    const from = offered.startedAt + 10_000;
    const used = appends.filter((a) => a >= from && a < offered.endedAt).length / ((BUDGET * (offered.endedAt - from)) / 1000);
    const waited = st.outcome.forwarded.filter((o) => o.attempt === 0 && (o.waitedMs ?? 0) >= 100).length;
    const parked = st.outcome.forwarded.filter((o) => o.attempt > 0).length;
    const exits = st.stops.filter((x) => x.code !== 0).length;
    const bins = new Map<number, number>();
    for (const at of appends) {
      const second = Math.floor((at - offered.startedAt) / 1000);
      bins.set(second, (bins.get(second) ?? 0) + 1);
    }
    const above = [...bins.values()].filter((n) => n > bound).length;
    const each = BUDGET_PRODUCERS.map((id) => `${id} ${maxInWindow(st.outcome.forwarded.filter((o) => o.producer === id).map((o) => o.appendMs).sort((x, y) => x - y), 1000)}`).join(', ');
    // Where the busiest second lies: its start, what went out in it, and the churn around it.
    let start = appends[0] ?? 0;
    for (let i = 0, j = 0; i < appends.length; i += 1) {
      while ((appends[j] as number) < (appends[i] as number) - 999) j += 1;
      if (i - j + 1 === busiest) {
        start = appends[j] as number;
        break;
      }
    }
    const inIt = st.outcome.forwarded.filter((o) => o.appendMs >= start && o.appendMs < start + 1000);
    const rel = (at: number): string => `${((at - offered.startedAt) / 1000).toFixed(1)} s`;
    const perSecond = Array.from({ length: 11 }, (_, k) => appends.filter((a) => a >= start + (k - 5) * 1000 && a < start + (k - 4) * 1000).length);
    const near = events.filter(([at]) => Math.abs(at - start) < 10_000).map(([at, what]) => `${what} ${rel(at)}`).join(', ');
    const where = `busiest second from ${rel(start)}: ${inIt.filter((o) => o.attempt > 0).length} parked before, ${inIt.filter((o) => o.attempt === 0 && (o.waitedMs ?? 0) >= 100).length} waited in memory, ${inIt.filter((o) => o.attempt === 0 && (o.waitedMs ?? 0) < 100).length} at once; rounds near it: ${near || 'none'}; per second from 5 s before it: ${perSecond.join(' ')}`;
    return [{
      scenario: 'budget-churn',
      invariant: `${REPEAT} rounds of a replica joining and the oldest leaving, messages waiting in the budget's lines: lost 0; duplicates 0; every replica exits 0; busiest second of all producers together ≤ ${bound} (1.05 × ${BUDGET}/s + a slot for each of up to ${AT_MOST} replicas); messages forwarded after waiting in a line`,
      measured: `lost ${t.lost}; duplicates ${t.duplicates}; busiest second ${busiest}, whole seconds above the bound ${above} of ${bins.size}; busiest second per producer ${each} (a share of ${BUDGET / BUDGET_PRODUCERS.length}/s); budget used ${(used * 100).toFixed(1)} % while the load ran; forwarded after waiting in memory ${waited}, after being parked ${parked}; replicas that exited ≠ 0: ${rounds.length + exits}; last replicas ${fmtLive(st.live)}`,
      pass: t.lost === 0 && t.duplicates === 0 && busiest <= bound && waited > 0 && rounds.length === 0 && exits === 0 && st.live.every(up),
      dir: s.dir,
      details: [...rounds, `behind at the end: ${lags.join('; ') || 'nothing'}`, where, `dead-lettered by the attempt they carried: ${fmtAttempts(st.outcome.deadLettered)}`, fmtTotals(t), duplicateDetails(st.outcome, offered.startedAt, 'the load started'), fmtSettled(st)],
    }];
  },
};
