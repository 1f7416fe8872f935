import { redisOptions } from '../../../src/limit/redis-client';

describe('the limiter Redis client options', () => {
  describe('when Redis is slow or gone', () => {
    it('fails fast: a backstop command timeout, no offline queue, no retry, no resend after a reconnect, short back-off', () => {
      const options = redisOptions(50);
      expect(options).toMatchObject({
        commandTimeout: 1000,
        enableOfflineQueue: false,
        maxRetriesPerRequest: 0,
        autoResendUnfulfilledCommands: false,
        enableAutoPipelining: true,
        lazyConnect: false,
      });
      const backOff = options.retryStrategy as (times: number) => number;
      expect([1, 2, 3, 10, 1000].map(backOff)).toEqual([50, 100, 200, 1000, 1000]);
      expect(redisOptions(500).commandTimeout).toBe(2000);
    });
  });
});
