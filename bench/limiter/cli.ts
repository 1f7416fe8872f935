/**
 * `npm run bench:limiter`: sluice's Redis limiter against rate-limiter-flexible's
 * RateLimiterRedis on the same Redis (SLUICE_REDIS_URL, e.g. from `npm run services -- up`).
 * For 1, 10 and 100 messages per call it alternates the two sides ROUNDS times and reports
 * medians and their ratio; then Redis memory per tracked producer over 100k producers.
 */
import Redis from 'ioredis';
import { redisOptions } from '../../src/limit/redis-client';
import { bytesPerProducer } from './memory';
import { measure, median } from './measure';
import { flexibleStep, sluiceStep } from './workloads';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const ROUND_MS = Number(process.env.BENCH_ROUND_MS ?? 2000);
const CONCURRENCY = 64;
const MEMORY_PRODUCERS = 100_000;
const WORKLOADS = [
  { k: 1, target: 'within 1.2x (>= 0.83x)', met: (r: number) => r >= 1 / 1.2 },
  { k: 10, target: '>= 5x', met: (r: number) => r >= 5 },
  { k: 100, target: '>= 20x', met: (r: number) => r >= 20 },
];

const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');
const pad = (cells: string[], widths: number[]): string => cells.map((c, i) => c.padEnd(widths[i])).join('  ');

const main = async (): Promise<void> => {
  const url = process.env.SLUICE_REDIS_URL;
  if (!url) throw new Error('SLUICE_REDIS_URL is not set: eval "$(npm run -s services -- up)" first');
  const redis = new Redis(url, redisOptions(5000));
  await new Promise<void>((resolve, reject) => redis.once('ready', resolve).once('error', reject));
  const run = `bench-${Date.now().toString(36)}`;
  const started = Date.now();
  const rows: string[][] = [];
  for (const { k, target, met } of WORKLOADS) {
    const sluice = sluiceStep(redis, `${run}:s${k}:`, k);
    const flexible = flexibleStep(redis, `${run}:f${k}`, k);
    await measure(300, CONCURRENCY, sluice); // warm-up: scripts loaded, connections busy
    await measure(300, CONCURRENCY, flexible);
    const ours: number[] = [];
    const theirs: number[] = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      const first = round % 2 === 0; // alternate which side goes first
      if (first) ours.push(await measure(ROUND_MS, CONCURRENCY, sluice));
      theirs.push(await measure(ROUND_MS, CONCURRENCY, flexible));
      if (!first) ours.push(await measure(ROUND_MS, CONCURRENCY, sluice));
    }
    const ratio = median(ours) / median(theirs);
    rows.push([`${k} per call`, fmt(median(ours)), fmt(median(theirs)), `${ratio.toFixed(2)}x rate-limiter-flexible`, target, met(ratio) ? 'met' : 'MISSED']);
    await redis.eval(`for _, k in ipairs(redis.call('KEYS', ARGV[1])) do redis.call('UNLINK', k) end`, 0, `${run}:*`);
  }
  const memory = await bytesPerProducer(redis, 'sluice:', MEMORY_PRODUCERS);
  const head = ['workload (decisions/s, median)', 'sluice', 'rate-limiter-flexible', 'ratio', 'target', ''];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  console.log(`\nsluice limiter vs rate-limiter-flexible RateLimiterRedis, same Redis (${url}), ${CONCURRENCY} calls in flight, ${ROUNDS} alternating rounds of ${ROUND_MS} ms`);
  console.log(pad(head, widths));
  for (const row of rows) console.log(pad(row, widths));
  console.log(`\nRedis memory per tracked producer (used_memory delta over ${fmt(MEMORY_PRODUCERS)} producers, rule 1/h): ${memory.bytes.toFixed(1)} bytes (target <= 150: ${memory.bytes <= 150 ? 'met' : 'MISSED'})`);
  console.log(`  one key: ${memory.sample}`);
  console.log(`\ntotal run time ${((Date.now() - started) / 1000).toFixed(0)} s`);
  redis.disconnect();
};

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
