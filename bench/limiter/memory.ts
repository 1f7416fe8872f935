/**
 * Redis memory per tracked producer: used_memory before and after deciding one message for
 * each of `count` producers under a slow rule (1/h, so every key lives an hour), divided by
 * the count; the keys are removed afterwards.
 */
import type Redis from 'ioredis';
import { compileRule } from '../../src/limit/compile-rule';
import { producerKey } from '../../src/limit/producer-key';
import { createRedisStore } from '../../src/limit/redis-store';

const usedMemory = async (redis: Redis): Promise<number> => {
  const info = await redis.info('memory');
  return Number(/used_memory:(\d+)/.exec(info)?.[1]);
};

/** Keys as in production: the default prefix `sluice:` and short producer ids (`bench-<i>`). */
export const bytesPerProducer = async (redis: Redis, keyPrefix: string, count: number): Promise<{ bytes: number; sample: string }> => {
  const compiled = compileRule({ rate: '1/h' });
  if (!compiled.ok) throw new Error('bench rule');
  const store = createRedisStore({ redis, keyPrefix, timeoutMs: 5000 });
  const ids = Array.from({ length: count }, (_, i) => `bench-${i}`);
  const before = await usedMemory(redis);
  for (let i = 0; i < count; i += 500) {
    await Promise.all(ids.slice(i, i + 500).map((producer) => store.decide({ producer, rule: compiled.rule, sizes: [100] })));
  }
  const after = await usedMemory(redis);
  const sampleKey = producerKey(keyPrefix, ids[0]);
  const sample = `${sampleKey} = ${await redis.get(sampleKey)}`;
  for (let i = 0; i < count; i += 1000) await redis.unlink(...ids.slice(i, i + 1000).map((id) => producerKey(keyPrefix, id)));
  return { bytes: (after - before) / count, sample };
};
