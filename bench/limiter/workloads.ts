/**
 * The two sides of the limiter benchmark on the same Redis: sluice's Redis store (one script
 * call decides k messages) and rate-limiter-flexible's RateLimiterRedis (one consume per
 * message, as it has no per-message batch decision), both on an ioredis client configured the
 * same way (auto-pipelining on). Each step decides k messages of one producer.
 */
import type Redis from 'ioredis';
import { RateLimiterRedis } from 'rate-limiter-flexible';
import { compileRule } from '../../src/limit/compile-rule';
import { createRedisStore } from '../../src/limit/redis-store';

export const PRODUCERS = 1000;

type Step = (worker: number, i: number) => Promise<number>;

const producerOf = (worker: number, i: number): string => `p${(worker * 7919 + i * 104_729) % PRODUCERS}`;

export const sluiceStep = (redis: Redis, keyPrefix: string, k: number): Step => {
  const compiled = compileRule({ rate: '1000/s', queue: '1m' });
  if (!compiled.ok) throw new Error('bench rule');
  const store = createRedisStore({ redis, keyPrefix, timeoutMs: 5000 });
  const sizes = Array.from({ length: k }, () => 100);
  return async (worker, i) => {
    const { decisions } = await store.decide({ producer: producerOf(worker, i), rule: compiled.rule, sizes });
    return decisions.length;
  };
};

export const flexibleStep = (redis: Redis, keyPrefix: string, k: number): Step => {
  const limiter = new RateLimiterRedis({ storeClient: redis, keyPrefix, points: 1000, duration: 1 });
  const consume = (key: string) => limiter.consume(key, 1).then(
    () => 1,
    (rejection: unknown) => {
      if (rejection instanceof Error) throw rejection;
      return 1; // refused: still a decision
    },
  );
  return async (worker, i) => {
    const key = producerOf(worker, i);
    const results = await Promise.all(Array.from({ length: k }, () => consume(key)));
    return results.length;
  };
};
