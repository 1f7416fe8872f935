/**
 * Throughput: `count` messages prefilled on one ingress topic, then each side in turn (fresh
 * group, fresh downstream topic) drains it; the rate is measured between the first and the
 * last downstream offset movement (group join excluded), with the side's CPU time over the
 * same span and the Redis script calls of the whole run.
 */
import type { BenchContext } from './context';
import { prefill } from './load';
import { scriptCalls } from './redis-info';
import type { SideKind } from './side';
import type { SluiceSetup } from './side-env';

export interface ThroughputRun {
  side: SideKind;
  msgsPerSec: number;
  cpuSecPerMillion: number;
  scriptCallsPerMessage: number;
  /** Limiter store calls that failed (timed out) and were answered by limiter.onStoreError. */
  storeErrors: number;
}

const drain = async (ctx: BenchContext, kind: SideKind, ingress: string, count: number, setup: SluiceSetup): Promise<ThroughputRun> => {
  const downstream = await ctx.book.downstream('tp-down');
  const callsBefore = await scriptCalls(ctx.redis);
  const side = await ctx.launch(kind, { ingress, downstream }, setup);
  try {
    const deadline = Date.now() + 300_000;
    let first: { at: number; n: number; cpu: number } | undefined;
    for (;;) {
      const n = await ctx.book.total(downstream);
      if (n > 0 && !first) first = { at: Date.now(), n, cpu: (await side.usage()).cpuMicros };
      if (n >= count && first) {
        const at = Date.now();
        const cpu = (await side.usage()).cpuMicros;
        const moved = count - first.n;
        const calls = (await scriptCalls(ctx.redis)) - callsBefore;
        return {
          side: kind, msgsPerSec: (moved * 1000) / (at - first.at), cpuSecPerMillion: (cpu - first.cpu) / moved,
          scriptCallsPerMessage: calls / count, storeErrors: await side.storeErrors(),
        };
      }
      if (Date.now() > deadline) throw new Error(`${kind}: only ${n} of ${count} messages downstream after 300 s`);
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    await side.stop();
  }
};

/** Alternates the two sides `rounds` times over one prefilled ingress topic. */
export const measureThroughput = async (
  ctx: BenchContext, { count, producers, rounds }: { count: number; producers: number; rounds: number },
): Promise<ThroughputRun[]> => {
  const ingress = await ctx.book.ingress(`tp-${producers}`);
  await prefill(ctx.kafka, ingress, count, { producers, valueBytes: 1024 });
  const setup = ctx.sluiceSetup({ rate: '1000000/s', queue: '1m' });
  const runs: ThroughputRun[] = [];
  for (let round = 0; round < rounds; round += 1) {
    // Alternate which side goes first, so drift in the machine's load does not favour one.
    const order: SideKind[] = round % 2 === 0 ? ['pipe', 'sluice'] : ['sluice', 'pipe'];
    for (const kind of order) runs.push(await drain(ctx, kind, ingress, count, setup));
  }
  return runs;
};
