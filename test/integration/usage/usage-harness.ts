/** A recorder and a reader on a real Redis or Redis Cluster, with a key prefix of their own. */
import type { Cluster, Redis } from 'ioredis';
import { Writable } from 'node:stream';
import type { Clock } from '../../../src/clock';
import { createLogger } from '../../../src/logger';
import { readUsage } from '../../../src/usage/read-usage';
import type { Resolution } from '../../../src/config/usage-resolutions';
import { createUsageRecorder } from '../../../src/usage/usage-recorder';
import { USAGE_COUNTERS, type UsageCounts, zeroCounts } from '../../../src/usage/usage-counters';
import { randomKeyPrefix } from '../../helpers/redis';

export const silentLogger = () => createLogger({ level: 'silent', destination: new Writable({ write: (_c, _e, done) => done() }) });

export const usageHarness = (redis: Redis | Cluster, resolutions: readonly Resolution[], clock: Clock, flushIntervalMs = 3_600_000) => {
  const keyPrefix = randomKeyPrefix('usage');
  const recorder = createUsageRecorder({ redis, keyPrefix, resolutions, clock, logger: silentLogger(), flushIntervalMs });
  const totals = async (producer: string, resolution: Resolution): Promise<UsageCounts> => {
    const rows = await readUsage({ redis, keyPrefix, producer, resolution, since: resolution.retentionMs, now: clock.now() });
    const sum = zeroCounts();
    for (const row of rows) for (const field of USAGE_COUNTERS) sum[field] += row[field];
    return sum;
  };
  return { keyPrefix, recorder, totals };
};
