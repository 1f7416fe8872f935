/** The real Redis and Redis Cluster run Lua scripts through ioredis, keys under a random prefix. */
import Redis, { Cluster } from 'ioredis';
import { createRedis, createRedisCluster, randomKeyPrefix } from '../../helpers/redis';

/** KEYS[1] counter, KEYS[2] last-writer; ARGV[1] increment, ARGV[2] writer. Reply: {count, previous writer}. */
const COUNT_AND_STAMP = `
local count = redis.call('INCRBY', KEYS[1], ARGV[1])
local previous = redis.call('GETSET', KEYS[2], ARGV[2])
return {count, previous or ''}
`;

type Client = Redis | Cluster;
type WithScript = Client & { countAndStamp(counter: string, writer: string, by: number, who: string): Promise<[number, string]> };

const define = (client: Client): WithScript => {
  client.defineCommand('countAndStamp', { numberOfKeys: 2, lua: COUNT_AND_STAMP });
  return client as WithScript;
};

const describeLua = (where: string, connect: () => Client, keyPrefix: () => string): void => {
  describe(`when a Lua script runs on the real ${where}`, () => {
    let client: WithScript;

    beforeAll(() => {
      client = define(connect());
    });

    afterAll(async () => {
      await client.quit();
    });

    it('runs atomically with its keys and arguments and returns its reply', async () => {
      const prefix = keyPrefix();
      const [counter, writer] = [`${prefix}count`, `${prefix}writer`];
      expect(await client.countAndStamp(counter, writer, 5, 'a')).toEqual([5, '']);
      expect(await client.countAndStamp(counter, writer, 2, 'b')).toEqual([7, 'a']);
      expect(await client.get(counter)).toBe('7');
    });

    it('keeps concurrent calls consistent', async () => {
      const prefix = keyPrefix();
      const replies = await Promise.all(
        Array.from({ length: 50 }, (_, i) => client.countAndStamp(`${prefix}count`, `${prefix}writer`, 1, `w${i}`)),
      );
      expect(replies.map(([count]) => count).sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    });
  });
};

describeLua('Redis', createRedis, () => randomKeyPrefix('lua'));

describeLua('Redis Cluster', createRedisCluster, () => `{${randomKeyPrefix('lua')}}`);

describe('when the keys of a Lua script on the Redis Cluster share a hash tag', () => {
  let cluster: Cluster;

  beforeAll(() => {
    cluster = createRedisCluster();
  });

  afterAll(async () => {
    await cluster.quit();
  });

  it('spreads different tags over the three masters', async () => {
    const slots = await Promise.all(
      Array.from({ length: 30 }, () => cluster.cluster('KEYSLOT', `{${randomKeyPrefix('slot')}}x`) as Promise<number>),
    );
    await cluster.ping();
    const masters = new Set(slots.map((slot) => cluster.slots[slot]?.[0]));
    expect(masters.size).toBe(3);
  });
});
