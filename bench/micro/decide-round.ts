/**
 * One fetch's decide round against a real Redis: P producers with K messages each, decided by
 * the Redis store (one script call per producer, ioredis pipelining them) and by one script
 * call for them all (decide-1.lua's body as a function, called per key). Both variants get the
 * same `now`, so their replies must be the same (checked). Per round: wall time from the first
 * call to the last answer, and this process's CPU. Rounds alternate the variants.
 *   SLUICE_REDIS_URL=redis://127.0.0.1:6379 npx tsx bench/micro/decide-round.ts [P] [K] [rounds]
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type Redis from 'ioredis';
import { compileRule } from '../../src/limit/compile-rule';
import { createRedisStore } from '../../src/limit/redis-store';
import { createRedisClient } from '../../src/limit/redis-client';
import { fingerprintDigits, producerKey } from '../../src/limit/producer-key';
import type { LimitRule } from '../../src/limit/types';

const P = Number(process.argv[2] ?? 55);
const K = Number(process.argv[3] ?? 5);
const ROUNDS = Number(process.argv[4] ?? 400);

const manySource = (): string => {
  const one = readFileSync(join(__dirname, '../../src/limit/lua/decide-1.lua'), 'utf8');
  return `local function decide_key(KEYS, ARGV)\n${one}\nend\nlocal out = {}\nlocal pos = 1\nfor i = 1, #KEYS do\n  local n = tonumber(ARGV[pos])\n  local args = {}\n  for j = 1, n do args[j] = ARGV[pos + j] end\n  pos = pos + n + 1\n  out[i] = decide_key({ KEYS[i] }, args)\nend\nreturn out\n`;
};

const main = async (): Promise<void> => {
  const redis = createRedisClient({ url: process.env.SLUICE_REDIS_URL ?? 'redis://127.0.0.1:6379', timeoutMs: 1000 }) as Redis;
  if (redis.status !== 'ready') await new Promise((ready) => redis.once('ready', ready));
  await redis.flushall();
  const compiled = compileRule({ rate: '100000/s', queue: '1m' });
  if (!compiled.ok) throw new Error('rule');
  const rule: LimitRule = compiled.rule;
  const store = createRedisStore({ redis, keyPrefix: 'a:', timeoutMs: 1000 });
  redis.defineCommand('sluiceDecideMany', { lua: manySource() });
  const many = redis as unknown as { sluiceDecideMany(n: number, ...args: string[]): Promise<number[][]> };
  const producers = Array.from({ length: P }, (_, i) => `producer-${i}`);
  const sizes = Array.from({ length: K }, () => 100);
  const ruleArgs = [fingerprintDigits(rule.fingerprint), 'l', String(rule.intervalMs), String(rule.capacityMs), '', ''];

  const viaStore = async (now: number): Promise<number[][]> => {
    const replies = await Promise.all(producers.map((producer) => store.decide({ producer, rule, sizes, now })));
    return replies.map((r) => [r.now, ...r.decisions.flatMap((d) => [d.admitted ? 0 : 1, d.at])]);
  };
  const viaOne = async (now: number): Promise<number[][]> => {
    const keys = producers.map((p) => producerKey('b:', p));
    const args: string[] = [];
    for (let i = 0; i < P; i += 1) args.push('10', String(now), ...ruleArgs, String(K), '', '');
    const replies = await many.sluiceDecideMany(P, ...keys, ...args);
    return replies.map((r) => r.map(Number));
  };

  const variants: [string, (now: number) => Promise<number[][]>][] = [['a call per producer (today)', viaStore], ['one call for all', viaOne]];
  const wall: number[][] = [[], []];
  const cpu: number[][] = [[], []];
  let now = Date.now();
  for (let round = -20; round < ROUNDS; round += 1) {
    now += 1000;
    const got: number[][][] = [];
    for (let k = 0; k < 2; k += 1) {
      const v = (k + round) & 1;
      const c0 = process.cpuUsage();
      const t0 = process.hrtime.bigint();
      got[v] = await variants[v][1](now);
      const t1 = process.hrtime.bigint();
      const c = process.cpuUsage(c0);
      if (round >= 0) {
        wall[v].push(Number(t1 - t0) / 1e3);
        cpu[v].push(c.user + c.system);
      }
    }
    if (JSON.stringify(got[0]) !== JSON.stringify(got[1])) throw new Error(`round ${round}: the replies differ\n${JSON.stringify(got[0][0])}\n${JSON.stringify(got[1][0])}`);
  }
  const median = (xs: number[]): number => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
  const q = (xs: number[], p: number): number => [...xs].sort((x, y) => x - y)[Math.floor(xs.length * p)];
  console.log(`${P} producers × ${K} messages, ${ROUNDS} rounds, replies identical`);
  variants.forEach(([name], v) => console.log(`  ${name.padEnd(30)} wall ${median(wall[v]).toFixed(0)} µs [p10 ${q(wall[v], 0.1).toFixed(0)}, p90 ${q(wall[v], 0.9).toFixed(0)}]  CPU ${median(cpu[v]).toFixed(0)} µs [p10 ${q(cpu[v], 0.1).toFixed(0)}, p90 ${q(cpu[v], 0.9).toFixed(0)}]`));
  redis.disconnect();
};

void main();
