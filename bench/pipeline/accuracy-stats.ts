/**
 * Judging the forwarded rate by broker append time (pure). Per producer, the backlogged span
 * is from its first forward + 1 s (the first second includes the start-up) to the end of the
 * offered load: all the while it had more waiting than its quota lets out.
 */
import type { Arrival } from './read-downstream';
import { mean } from './stats';

export interface AccuracyResult {
  producers: number;
  maxErrorPct: number;
  meanErrorPct: number;
  /** Forwarded ÷ quota over the backlogged span, the lowest producer, in %. */
  minQuotaUsedPct: number;
  meanQuotaUsedPct: number;
  /** The most messages of one producer appended within any 1 s. */
  max1sCount: number;
  /** Where that second began, in ms after the run's first append (a start's second, or later). */
  max1sAtMs?: number;
}

/** Largest number of sorted times inside any window of `widthMs` (two pointers), and the first time of that window. */
export const busiestWindow = (sortedTimes: readonly number[], widthMs: number): { count: number; from: number } => {
  let best = 0;
  let from = NaN;
  for (let lo = 0, hi = 0; hi < sortedTimes.length; hi += 1) {
    while (sortedTimes[hi] - sortedTimes[lo] >= widthMs) lo += 1;
    if (hi - lo + 1 > best) {
      best = hi - lo + 1;
      from = sortedTimes[lo];
    }
  }
  return { count: best, from };
};

export const judgeAccuracy = (arrivals: readonly Arrival[], quotaPerSec: number, offeredUntilMs: number): AccuracyResult => {
  const byProducer = new Map<string, number[]>();
  for (const a of arrivals) {
    const list = byProducer.get(a.producer);
    if (list) list.push(a.appendMs);
    else byProducer.set(a.producer, [a.appendMs]);
  }
  const errors: number[] = [];
  const used: number[] = [];
  let max1s = 0;
  let max1sFrom = NaN;
  let first = Infinity;
  for (const times of byProducer.values()) {
    times.sort((a, b) => a - b);
    first = Math.min(first, times[0]);
    const busiest = busiestWindow(times, 1000);
    if (busiest.count > max1s) {
      max1s = busiest.count;
      max1sFrom = busiest.from;
    }
    const from = times[0] + 1000;
    const spanMs = offeredUntilMs - from;
    if (spanMs <= 0) continue;
    const count = times.filter((t) => t >= from && t < offeredUntilMs).length;
    const rate = (count * 1000) / spanMs;
    errors.push((Math.abs(rate - quotaPerSec) / quotaPerSec) * 100);
    used.push((rate / quotaPerSec) * 100);
  }
  return {
    producers: errors.length,
    maxErrorPct: Math.max(...errors),
    meanErrorPct: mean(errors),
    minQuotaUsedPct: Math.min(...used),
    meanQuotaUsedPct: mean(used),
    max1sCount: max1s,
    max1sAtMs: max1sFrom - first,
  };
};
