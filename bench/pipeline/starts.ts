/**
 * Many short starts (`npx tsx bench/pipeline/starts.ts`, on the services of `npm run services`):
 * for each, a fresh sidecar (one replica, 100/s a producer, queue 60s) on fresh topics, 10
 * producers offered at 3 × their quota for STARTS_SECONDS (4), and the busiest second of one
 * producer by the broker's append time. STARTS_STALL=broker|sidecar stops that process with
 * SIGSTOP once a start, at a random instant in the load's first 800 ms, for 100–500 ms (the
 * broker's stop holds up the load too). STARTS_RUNS (10) starts; each start's arrivals are
 * written to `start-<n>.json` in the side logs' folder. The accuracy phase has one start a run;
 * this is for the seconds just after a start, which decide its largest second.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { randomGroupId } from '../../test/helpers/names';
import { judgeAccuracy } from './accuracy-stats';
import { createContext } from './context';
import { paced } from './load';
import { readDownstream } from './read-downstream';
import { servicesEnv } from './services-env';
import { buildSides } from './side';

const RATE = 100;
const PRODUCERS = 10;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
/** The newest process whose command line matches `pattern` (not pgrep itself). */
const newestPid = (pattern: string): number => Number(execFileSync('pgrep', ['-n', '-f', pattern]).toString().trim());

const main = async (): Promise<void> => {
  const runs = Number(process.env.STARTS_RUNS ?? 10);
  const seconds = Number(process.env.STARTS_SECONDS ?? 4);
  const stall = process.env.STARTS_STALL ?? 'none';
  if (!['none', 'broker', 'sidecar'].includes(stall)) throw new Error(`STARTS_STALL: none, broker or sidecar, not ${stall}`);
  buildSides();
  const ctx = await createContext(servicesEnv(process.env));
  const counts: number[] = [];
  try {
    for (let n = 0; n < runs; n += 1) {
      const setup = ctx.sluiceSetup({ rate: `${RATE}/s`, queue: '60s' });
      const ingress = await ctx.book.ingress('starts');
      const downstream = await ctx.book.downstream('starts-down');
      const side = await ctx.launch('sluice', { ingress, downstream, group: randomGroupId('bench-starts') }, setup);
      const stalled = stall === 'none' ? undefined : newestPid(stall === 'broker' ? 'kafka\\.Kafka' : 'dist/main\\.js run');
      const offsetMs = Math.floor(Math.random() * 800);
      const holdMs = 100 + Math.floor(Math.random() * 400);
      let stallTimer: NodeJS.Timeout | undefined;
      try {
        await sleep(500);
        if (stalled !== undefined) {
          stallTimer = setTimeout(() => {
            process.kill(stalled, 'SIGSTOP');
            setTimeout(() => process.kill(stalled, 'SIGCONT'), holdMs);
          }, offsetMs);
        }
        const start = Date.now();
        await paced(ctx.kafka, ingress, 3 * RATE * PRODUCERS, seconds * 1000, { producers: PRODUCERS, valueBytes: 1024 });
        await sleep(Math.max(0, start + seconds * 1000 + 1000 - Date.now()));
        await side.stop();
        const arrivals = await readDownstream(ctx.kafka, downstream, await ctx.book.total(downstream));
        const { max1sCount, max1sAtMs } = judgeAccuracy(arrivals, RATE, start + seconds * 1000);
        counts.push(max1sCount);
        writeFileSync(path.join(ctx.logDir, `start-${n}.json`), JSON.stringify({ start, stall, offsetMs, holdMs, arrivals }));
        const stallText = stalled === undefined ? 'no stall' : `${stall} stopped at ${offsetMs} ms for ${holdMs} ms`;
        process.stdout.write(`start ${n}: busiest second ${max1sCount} from ${max1sAtMs} ms after the first append; ${stallText}; ${arrivals.length} arrived; ${side.logFile}\n`);
      } finally {
        clearTimeout(stallTimer);
        // Never leave the broker stopped, whatever failed meanwhile (a sidecar gone already: no such process).
        if (stalled !== undefined) {
          try {
            process.kill(stalled, 'SIGCONT');
          } catch {
            // gone
          }
        }
        await side.stop();
      }
    }
  } finally {
    await ctx.close();
  }
  process.stdout.write(`busiest second by start, at ${RATE}/s (bound 1.15 ×: ${Math.round(1.15 * RATE)}): ${counts.sort((a, b) => a - b).join(' ')}\n`);
};

main().then(() => process.exit(0), (error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
