/** One-shot commands (status, drain) wait for the Redis client to be ready: the client keeps no offline queue. */
import type { Cluster, Redis } from 'ioredis';
import { SluiceError } from '../errors';
import { setTimer } from '../timers';

export const waitReady = (redis: Redis | Cluster, timeoutMs: number): Promise<void> =>
  redis.status === 'ready'
    ? Promise.resolve()
    : new Promise<void>((resolve, reject) => {
        const timer = setTimer(() => {
          redis.off('ready', onReady);
          reject(new SluiceError('STORE_UNAVAILABLE', `Redis did not answer within ${timeoutMs} ms`, { retriable: true }));
        }, timeoutMs);
        const onReady = (): void => {
          timer.clear();
          resolve();
        };
        redis.once('ready', onReady);
      });
