/**
 * Every sluice key has a TTL, so a volatile-* (or allkeys-*) policy may evict a producer's
 * bucket and forget its backlog: checkEvictionPolicy warns at start unless maxmemory-policy
 * is noeviction, and goes on at debug when CONFIG is refused (managed Redis).
 */
import type { Cluster, Redis } from 'ioredis';
import { createRedisClient } from '../../../src/limit/redis-client';
import { checkEvictionPolicy } from '../../../src/limit/eviction-policy';
import { createLogger } from '../../../src/logger';
import { waitFor } from '../../helpers/wait';
import { startPrivateRedis, type PrivateRedis } from './private-redis';

const capture = () => {
  const lines: Array<{ level: string; msg: string } & Record<string, unknown>> = [];
  const logger = createLogger({ level: 'debug', destination: { write: (line: string) => lines.push(JSON.parse(line)) } });
  return { logger, lines };
};

const connected = async <T extends Redis | Cluster>(client: T): Promise<T> => {
  await waitFor(() => client.status === 'ready', { timeoutMs: 10_000, intervalMs: 20, message: 'the Redis client to be ready' });
  return client;
};

describe('the eviction policy check at start', () => {
  let server: PrivateRedis;
  let redis: Redis | Cluster;
  beforeAll(async () => {
    server = await startPrivateRedis();
    redis = await connected(createRedisClient({ url: server.url, timeoutMs: 2000 }));
  });
  afterAll(async () => {
    redis?.disconnect();
    await server?.stop();
  });

  const setPolicy = async (policy: string) => {
    const admin = server.admin();
    await admin.config('SET', 'maxmemory-policy', policy).finally(() => admin.disconnect());
  };

  describe.each(['volatile-lru', 'volatile-ttl', 'allkeys-lfu'])('when maxmemory-policy is %s', (policy) => {
    it('warns once, naming the policy and the fix', async () => {
      await setPolicy(policy);
      const { logger, lines } = capture();
      await expect(checkEvictionPolicy(redis, logger)).resolves.toEqual([policy]);
      const warnings = lines.filter((l) => l.level === 'warn');
      expect(warnings).toHaveLength(1);
      expect(warnings[0].msg).toContain(`maxmemory-policy is ${policy}`);
      expect(warnings[0].msg).toContain('noeviction');
    });
  });

  describe('when maxmemory-policy is noeviction', () => {
    it('says nothing at warn', async () => {
      await setPolicy('noeviction');
      const { logger, lines } = capture();
      await expect(checkEvictionPolicy(redis, logger)).resolves.toEqual(['noeviction']);
      expect(lines.filter((l) => l.level === 'warn')).toEqual([]);
    });
  });
});

describe('the eviction policy check on a Redis that refuses CONFIG', () => {
  let server: PrivateRedis;
  beforeAll(async () => {
    server = await startPrivateRedis({ extraArgs: ['--rename-command', 'CONFIG', ''] });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('logs at debug and goes on', async () => {
    const redis = await connected(createRedisClient({ url: server.url, timeoutMs: 2000 }));
    try {
      const { logger, lines } = capture();
      await expect(checkEvictionPolicy(redis, logger)).resolves.toBeUndefined();
      expect(lines.map((l) => l.level)).toEqual(['debug']);
      expect(lines[0].msg).toMatch(/maxmemory-policy/);
    } finally {
      redis.disconnect();
    }
  });
});

describe('the eviction policy check on a Redis Cluster', () => {
  let server: PrivateRedis;
  beforeAll(async () => {
    server = await startPrivateRedis({ cluster: true, extraArgs: ['--maxmemory-policy', 'volatile-lfu'] });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('asks every master and warns about the ones that may evict', async () => {
    const cluster = await connected(createRedisClient({ clusterNodes: `127.0.0.1:${server.port}`, timeoutMs: 2000 }));
    try {
      const { logger, lines } = capture();
      await expect(checkEvictionPolicy(cluster, logger)).resolves.toEqual(['volatile-lfu']);
      expect(lines.filter((l) => l.level === 'warn')).toHaveLength(1);
    } finally {
      cluster.disconnect();
    }
  });
});
