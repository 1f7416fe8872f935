/**
 * Added latency: each side in turn (fresh topics, joined before the load starts) gets `rate`
 * messages/s for `seconds`; latency is the downstream append time (LogAppendTime) minus the
 * send time, over the messages sent after the first second. p50 and p99 per run, and the p50 of
 * each second of the load (by send time, the first second too): whether a side keeps up, falls
 * behind, or catches up once its code is warm shows there. That first load meets each side cold
 * (its code not yet compiled by V8's optimizing compiler). Once it is all downstream, the same
 * side gets a second load of the same rate for `warmSeconds`, of which the last `seconds` are
 * measured (`warm`): what a sidecar that has been running for a while adds.
 */
import type { BenchContext } from './context';
import { paced } from './load';
import { type Arrival, readDownstream } from './read-downstream';
import { sideOrder, type SideKind } from './side';
import { percentile } from './stats';
import { watchCount } from './topics';

export interface LoadLatency {
  p50Ms: number;
  p99Ms: number;
  messages: number;
  /** p50 of the messages sent in each second of the load, from its start (second 0 included). */
  p50BySecondMs: number[];
}

export interface LatencyRun extends LoadLatency {
  side: SideKind;
  /** The second load, once the first was all downstream. */
  warm: LoadLatency;
}

const p50BySecond = (arrivals: readonly Arrival[], start: number, seconds: number): number[] => {
  const bySecond: number[][] = Array.from({ length: seconds }, () => []);
  for (const a of arrivals) bySecond[Math.min(seconds - 1, Math.max(0, Math.floor((a.sentMs - start) / 1000)))].push(a.appendMs - a.sentMs);
  return bySecond.map((l) => percentile(l, 50));
};

/** The latency of the messages sent from `start` to `end` (a load of `seconds`); p50 and p99 of those sent from `measuredFrom`. */
const ofLoad = (arrivals: readonly Arrival[], start: number, end: number, seconds: number, measuredFrom: number): LoadLatency => {
  const sent = arrivals.filter((a) => a.sentMs >= start && a.sentMs < end);
  const latencies = sent.filter((a) => a.sentMs >= measuredFrom).map((a) => a.appendMs - a.sentMs);
  return { p50Ms: percentile(latencies, 50), p99Ms: percentile(latencies, 99), messages: latencies.length, p50BySecondMs: p50BySecond(sent, start, seconds) };
};

const once = async (ctx: BenchContext, kind: SideKind, rate: number, seconds: number, warmSeconds: number): Promise<LatencyRun> => {
  const setup = ctx.sluiceSetup({ rate: '1000000/s', queue: '1m' });
  const ingress = await ctx.book.ingress('lat');
  const downstream = await ctx.book.downstream('lat-down');
  const side = await ctx.launch(kind, { ingress, downstream }, setup);
  const shape = { producers: 100, valueBytes: 1024 };
  let written = 0;
  const coldStart = Date.now();
  let warmStart = Infinity;
  try {
    written = await paced(ctx.kafka, ingress, rate, seconds * 1000, shape);
    await watchCount(() => ctx.book.total(downstream), written, { timeoutMs: 120_000 });
    warmStart = Date.now();
    written += await paced(ctx.kafka, ingress, rate, warmSeconds * 1000, shape);
    await watchCount(() => ctx.book.total(downstream), written, { timeoutMs: 120_000 });
  } finally {
    await side.stop();
  }
  const arrivals = await readDownstream(ctx.kafka, downstream, written);
  return {
    side: kind,
    ...ofLoad(arrivals, coldStart, warmStart, seconds, coldStart + 1000), // the first second left out
    warm: ofLoad(arrivals, warmStart, Infinity, warmSeconds, warmStart + (warmSeconds - seconds) * 1000),
  };
};

export const measureLatency = async (
  ctx: BenchContext, { rate, seconds, warmSeconds, rounds }: { rate: number; seconds: number; warmSeconds: number; rounds: number },
): Promise<LatencyRun[]> => {
  if (warmSeconds < seconds) throw new Error(`the warm load (${warmSeconds} s) must last at least the measured ${seconds} s`);
  const runs: LatencyRun[] = [];
  for (let round = 0; round < rounds; round += 1) {
    for (const kind of sideOrder(round)) runs.push(await once(ctx, kind, rate, seconds, warmSeconds));
  }
  return runs;
};
