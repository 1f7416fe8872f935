/**
 * Backlog accuracy (issue 9): `producers` producers, each on its own kafkajs client, offer 3×
 * their quota for `seconds` against one or two sidecar replicas with `queue` 5s (the backlog
 * is held, up to hold.maxMs, and what overflows is parked) or 60s (admitted, parked `delayed`
 * on the tiers), with sluice's default tiers and hold. The run goes on until every offered id
 * is downstream or dead-lettered, then judges by ids and broker append time
 * (test/integration/retry/backlog-fixture.ts):
 * - quota used while backlogged (forwards while more than a tick's worth waited ÷ rate × that time);
 * - the busiest second of each producer ÷ its rate;
 * - tier writes per parked message (records on the tier topics ÷ distinct ids among them);
 * - lost, duplicates, dead-lettered, limiter store errors.
 * What was offered and what came out is written beside the side logs (backlog-QUEUE-REPLICAS.json).
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  BacklogScenario, judgeAll, offerLoad, readOutcome, tierRecords, tierWrites, type ProducerJudgement, type TierWrites,
} from '../../test/integration/retry/backlog-fixture';
import { randomGroupId } from '../../test/helpers/names';
import { waitFor } from '../../test/helpers/wait';
import type { BenchContext } from './context';
import { median } from './stats';
import type { Side } from './side';

export interface BacklogSettings {
  replicas: number;
  seconds: number;
  producers: number;
  quotaPerSec: number;
  queue: string;
}

export interface BacklogRun {
  queue: string;
  replicas: number;
  producers: number;
  offered: number;
  lost: number;
  duplicates: number;
  deadLettered: number;
  /** Every offered id came out within the deadline (2 × the ideal drain + 20 s). */
  complete: boolean;
  /** Seconds from the load's start until the last id came out (ideal: offered ÷ quota). */
  drainSeconds: number;
  minQuotaUsedPct: number;
  meanQuotaUsedPct: number;
  /** Per producer, in offer order. */
  quotaUsedPcts: number[];
  /** Busiest second ÷ rate: the worst producer, and the median producer. */
  maxBusiestRatio: number;
  medianBusiestRatio: number;
  busiestRatios: number[];
  tierWrites: TierWrites;
  storeErrors: number;
}

/** Waits until every group is Stable with `members` members (60 s at most). */
const groupsStable = async (ctx: BenchContext, groups: string[], members: number): Promise<void> => {
  const admin = ctx.kafka.admin();
  await admin.connect();
  try {
    await waitFor(async () => {
      const { groups: described } = await admin.describeGroups(groups);
      return described.every((g) => g.state === 'Stable' && g.members.length === members);
    }, { timeoutMs: 60_000, intervalMs: 100, message: `groups ${groups.join(', ')} stable with ${members} member(s)` });
  } finally {
    await admin.disconnect();
  }
};

export const measureBacklog = async (ctx: BenchContext, s: BacklogSettings): Promise<BacklogRun> => {
  const setup = { ...ctx.sluiceSetup({ rate: `${s.quotaPerSec}/s`, queue: s.queue }), tiers: 'default' as const };
  const ingress = await ctx.book.ingress('bl');
  const downstream = await ctx.book.downstream('bl-down');
  const group = randomGroupId('bench-bl');
  const scenario: BacklogScenario = {
    ingress, downstream, retryBase: `${setup.parking}.retry`, deadLetter: `${setup.parking}.dlq`, dir: ctx.logDir, env: {},
  };
  const sides: Side[] = [];
  let storeErrors = 0;
  try {
    // One at a time: the first creates the retry tiers (sluice's default set: names found afterwards).
    for (let r = 0; r < s.replicas; r += 1) sides.push(await ctx.launch('sluice', { ingress, downstream, group }, setup));
    // A replica is ready once it joined; the others' rejoin can still be under way. The load
    // starts once both groups are stable with every replica in them: this phase measures shaping
    // across replicas, not a hand-over (test/integration/retry/tier-backlog.test.ts has that).
    await groupsStable(ctx, [group, `${group}.retry`], s.replicas);
    const reader = await readOutcome(ctx.kafka, scenario);
    const offers = Array.from({ length: s.producers }, (_, i) => ({ id: `bl-${i}`, perSecond: 3 * s.quotaPerSec, seconds: s.seconds, keys: 8 }));
    const offered = await offerLoad([ctx.services.brokers], ingress, offers);
    const values = [...offered.byProducer.values()].flat().map((o) => o.value);
    const idealMs = 3 * s.seconds * 1000;
    const complete = await reader.accounted(values, offered.startedAt + 2 * idealMs + 20_000);
    for (const side of sides) storeErrors += await side.storeErrors();
    await Promise.all(sides.splice(0).map((side) => side.stop()));
    const outcome = await reader.finish();
    // what was offered and what came out, beside the side logs, for a closer look at a run
    writeFileSync(path.join(ctx.logDir, `backlog-${s.queue}-${s.replicas}.json`), JSON.stringify({ offered: Object.fromEntries(offered.byProducer), startedAt: offered.startedAt, outcome }));
    ctx.book.remember(...Object.keys(await tierRecords(ctx.kafka, scenario)).map((t) => `${scenario.retryBase}.${t}`));
    const writes = await tierWrites(ctx.kafka, scenario);
    const js: ProducerJudgement[] = judgeAll(offered, outcome, () => s.quotaPerSec);
    const used = js.map((j) => j.quotaUsedPct).filter((x) => !Number.isNaN(x));
    const ratios = js.map((j) => j.busiest1s / s.quotaPerSec);
    const lastOut = Math.max(...outcome.forwarded.map((o) => o.appendMs), ...outcome.deadLettered.map((o) => o.appendMs));
    return {
      queue: s.queue, replicas: s.replicas, producers: s.producers,
      offered: values.length,
      lost: js.reduce((n, j) => n + j.lost, 0),
      duplicates: js.reduce((n, j) => n + j.duplicates, 0),
      deadLettered: js.reduce((n, j) => n + j.deadLettered, 0),
      complete,
      drainSeconds: (lastOut - offered.startedAt) / 1000,
      minQuotaUsedPct: used.length ? Math.min(...used) : Number.NaN,
      meanQuotaUsedPct: used.length ? used.reduce((a, b) => a + b, 0) / used.length : Number.NaN,
      quotaUsedPcts: js.map((j) => Math.round(j.quotaUsedPct * 10) / 10),
      maxBusiestRatio: Math.max(...ratios),
      medianBusiestRatio: median(ratios),
      busiestRatios: ratios,
      tierWrites: writes,
      storeErrors,
    };
  } finally {
    await Promise.all(sides.map((side) => side.stop()));
  }
};
