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
 *   no message is forwarded twice (the hand-off fences, src/flow/handoff-fence.ts), none lost.
 */
import { readFileSync, watch } from 'node:fs';
import { judgeAll, offerLoad, readOutcome, Replica, startReplica } from '../../test/integration/retry/backlog-fixture';
import { pauseFor, pauseGroup, resumeGroup, sleep } from './faults';
import { duplicateDetails, fmtLive, fmtSettled, fmtTotals, open, quotaFile, replicas, Scenario, settle, TIER_SETTINGS, totals, up } from './harness';
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
