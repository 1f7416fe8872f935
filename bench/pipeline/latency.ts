/**
 * Added latency: each side in turn (fresh topics, joined before the load starts) gets `rate`
 * messages/s for `seconds`; latency is the downstream append time (LogAppendTime) minus the
 * send time, over the messages sent after the first second (warm-up). p50 and p99 per run, and
 * the p50 of each second of the load (by send time, the first second too): whether a side keeps
 * up, falls behind, or catches up once its code is warm shows there.
 */
import type { BenchContext } from './context';
import { paced } from './load';
import { readDownstream } from './read-downstream';
import { sideOrder, type SideKind } from './side';
import { percentile } from './stats';
import { watchCount } from './topics';

export interface LatencyRun {
  side: SideKind;
  p50Ms: number;
  p99Ms: number;
  messages: number;
  /** p50 of the messages sent in each second of the load, from its start (second 0 included). */
  p50BySecondMs: number[];
}

const p50BySecond = (arrivals: readonly { sentMs: number; appendMs: number }[], start: number, seconds: number): number[] => {
  const bySecond: number[][] = Array.from({ length: seconds }, () => []);
  for (const a of arrivals) bySecond[Math.min(seconds - 1, Math.max(0, Math.floor((a.sentMs - start) / 1000)))].push(a.appendMs - a.sentMs);
  return bySecond.map((l) => percentile(l, 50));
};

const once = async (ctx: BenchContext, kind: SideKind, rate: number, seconds: number): Promise<LatencyRun> => {
  const setup = ctx.sluiceSetup({ rate: '1000000/s', queue: '1m' });
  const ingress = await ctx.book.ingress('lat');
  const downstream = await ctx.book.downstream('lat-down');
  const side = await ctx.launch(kind, { ingress, downstream }, setup);
  let written = 0;
  const start = Date.now();
  try {
    written = await paced(ctx.kafka, ingress, rate, seconds * 1000, { producers: 100, valueBytes: 1024 });
    await watchCount(() => ctx.book.total(downstream), written, { timeoutMs: 120_000 });
  } finally {
    await side.stop();
  }
  const arrivals = await readDownstream(ctx.kafka, downstream, written);
  const latencies = arrivals.filter((a) => a.sentMs >= start + 1000).map((a) => a.appendMs - a.sentMs);
  return { side: kind, p50Ms: percentile(latencies, 50), p99Ms: percentile(latencies, 99), messages: latencies.length, p50BySecondMs: p50BySecond(arrivals, start, seconds) };
};

export const measureLatency = async (
  ctx: BenchContext, { rate, seconds, rounds }: { rate: number; seconds: number; rounds: number },
): Promise<LatencyRun[]> => {
  const runs: LatencyRun[] = [];
  for (let round = 0; round < rounds; round += 1) {
    for (const kind of sideOrder(round)) runs.push(await once(ctx, kind, rate, seconds));
  }
  return runs;
};
