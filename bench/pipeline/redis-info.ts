/** What the benchmark reads from Redis INFO: script calls (evalsha + eval) and used_memory. */
import type Redis from 'ioredis';

const field = (info: string, pattern: RegExp): number => Number(pattern.exec(info)?.[1] ?? 0);

export const scriptCalls = async (redis: Redis): Promise<number> => {
  const info = await redis.info('commandstats');
  return field(info, /cmdstat_evalsha:calls=(\d+)/) + field(info, /cmdstat_eval:calls=(\d+)/);
};

export const usedMemory = async (redis: Redis): Promise<number> => field(await redis.info('memory'), /used_memory:(\d+)/);

/**
 * Mean MEMORY USAGE of up to `sample` keys under `prefix`, how many keys there are, and how many
 * of them are usage history (`…:usage:…`, src/usage/usage-keys.ts) rather than limiter state.
 */
export const keyFootprint = async (redis: Redis, prefix: string, sample = 200): Promise<{ keys: number; usageKeys: number; meanBytes: number }> => {
  let cursor = '0';
  let keys = 0;
  let usageKeys = 0;
  const sampled: string[] = [];
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 5000);
    cursor = next;
    keys += batch.length;
    for (const key of batch) {
      if (key.includes('}:usage:')) usageKeys += 1;
      if (sampled.length < sample) sampled.push(key);
    }
  } while (cursor !== '0');
  const sizes = await Promise.all(sampled.map((key) => redis.memory('USAGE', key)));
  const total = sizes.reduce<number>((sum, s) => sum + Number(s ?? 0), 0);
  return { keys, usageKeys, meanBytes: sampled.length === 0 ? 0 : total / sampled.length };
};
