/**
 * Rate accuracy: `producers` producers offered at 3× their quota for `seconds` against one or
 * two sidecar replicas sharing Redis (same group, same key prefix), judged by the downstream
 * append times (accuracy-stats.ts). Every arrival is written to `accuracy-<replicas>.json` in the
 * side logs' folder, for a look at where a producer fell short.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { randomGroupId } from '../../test/helpers/names';
import { type AccuracyResult, judgeAccuracy } from './accuracy-stats';
import type { BenchContext } from './context';
import { paced } from './load';
import { readDownstream } from './read-downstream';
import type { Side } from './side';

export interface AccuracySettings {
  replicas: number;
  seconds: number;
  producers: number;
  quotaPerSec: number;
  queue: string;
  /** The sidecars' redis.timeoutMs (unset: sluice's default). */
  redisTimeoutMs?: number;
}

export type AccuracyRun = AccuracyResult & { replicas: number; storeErrors: number; duplicates: number };

export const measureAccuracy = async (ctx: BenchContext, s: AccuracySettings): Promise<AccuracyRun> => {
  const base = ctx.sluiceSetup({ rate: `${s.quotaPerSec}/s`, queue: s.queue });
  const setup = s.redisTimeoutMs === undefined ? base : { ...base, env: { SLUICE_REDIS_TIMEOUT_MS: String(s.redisTimeoutMs) } };
  const ingress = await ctx.book.ingress('acc');
  const downstream = await ctx.book.downstream('acc-down');
  const group = randomGroupId('bench-acc');
  const sides: Side[] = [];
  let offeredUntil = 0;
  let storeErrors = 0;
  try {
    // One at a time: the first creates the retry tiers.
    for (let r = 0; r < s.replicas; r += 1) sides.push(await ctx.launch('sluice', { ingress, downstream, group }, setup));
    // Let the group settle with every replica in it before the load starts.
    await new Promise((resolve) => setTimeout(resolve, s.replicas > 1 ? 3000 : 500));
    const start = Date.now();
    offeredUntil = start + s.seconds * 1000;
    await paced(ctx.kafka, ingress, 3 * s.quotaPerSec * s.producers, s.seconds * 1000, { producers: s.producers, valueBytes: 1024 });
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, offeredUntil + 1000 - Date.now())));
    for (const side of sides) storeErrors += await side.storeErrors();
  } finally {
    await Promise.all(sides.map((side) => side.stop()));
  }
  const total = await ctx.book.total(downstream);
  const arrivals = await readDownstream(ctx.kafka, downstream, total);
  const duplicates = arrivals.length - new Set(arrivals.map((a) => a.seq)).size;
  writeFileSync(path.join(ctx.logDir, `accuracy-${s.replicas}.json`), JSON.stringify({ offeredFrom: offeredUntil - s.seconds * 1000, offeredUntil, arrivals }));
  return { replicas: s.replicas, storeErrors, duplicates, ...judgeAccuracy(arrivals, s.quotaPerSec, offeredUntil) };
};
