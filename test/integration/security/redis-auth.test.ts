/**
 * A Redis that requires AUTH (`--requirepass`), standalone and as a (one-node) Redis Cluster:
 * the client built from the settings (redisClientOptionsOf → createRedisClient) authenticates
 * with redis.password, or the password inside redis.url, and runs the limiter's script.
 */
import type { Cluster, Redis } from 'ioredis';
import { loadConfig } from '../../../src/config';
import { secretsOf } from '../../../src/config/redact';
import { createLogger } from '../../../src/logger';
import { createRedisClient, redisClientOptionsOf } from '../../../src/limit/redis-client';
import { createRedisStore } from '../../../src/limit/redis-store';
import { rule } from '../../contracts/limiter-harness';
import { randomKeyPrefix } from '../../helpers/names';
import { waitFor } from '../../helpers/wait';
import { startPrivateRedis, type PrivateRedis } from './private-redis';

const PASSWORD = 'auth-Pa55-w0rd-standalone';
const topics = { SLUICE_INGRESS_TOPIC: 'events', SLUICE_DOWNSTREAM_TOPIC: 'events.out' };

/** the client the wiring builds from these settings; errors collected, not thrown. */
const clientFor = (env: Record<string, string>) => {
  const config = loadConfig({ env: { ...topics, SLUICE_REDIS_TIMEOUT_MS: '2000', ...env } });
  const errors: Error[] = [];
  const redis = createRedisClient({ ...redisClientOptionsOf(config), onError: (error) => errors.push(error) });
  return { redis, errors };
};

/** one limiter decision through the real script: proves AUTH passed and the script runs. */
const decideOnce = async (redis: Redis | Cluster) => {
  const store = createRedisStore({ redis, keyPrefix: randomKeyPrefix('auth'), timeoutMs: 2000 });
  return store.decide({ producer: 'p', rule: rule({ rate: '10/s' }), sizes: [1] });
};

const readyOrErrors = (redis: Redis | Cluster, errors: Error[]) =>
  waitFor(() => {
    if (redis.status === 'ready') return true;
    if (errors.some((e) => /NOAUTH|WRONGPASS|Authentication required/i.test(e.message))) throw new Error(`AUTH failed: ${errors.map((e) => e.message).join('; ')}`);
    return false;
  }, { timeoutMs: 10_000, intervalMs: 20, message: 'the Redis client to be ready' });

describe('a Redis that requires a password', () => {
  let server: PrivateRedis;
  beforeAll(async () => {
    server = await startPrivateRedis({ password: PASSWORD });
  });
  afterAll(async () => {
    await server?.stop();
  });

  describe('when redis.password is set', () => {
    it('authenticates with it and the limiter decides through Redis', async () => {
      const { redis, errors } = clientFor({ SLUICE_REDIS_URL: server.url, SLUICE_REDIS_PASSWORD: PASSWORD });
      try {
        await readyOrErrors(redis, errors);
        await expect(decideOnce(redis)).resolves.toBeDefined();
      } finally {
        redis.disconnect();
      }
    });
  });

  describe('when redis.password and a password inside redis.url differ', () => {
    it('uses redis.password, as its doc says', async () => {
      const { redis, errors } = clientFor({
        SLUICE_REDIS_URL: `redis://:stale-password@127.0.0.1:${server.port}`,
        SLUICE_REDIS_PASSWORD: PASSWORD,
      });
      try {
        await readyOrErrors(redis, errors);
        expect(await redis.ping()).toBe('PONG');
      } finally {
        redis.disconnect();
      }
    });
  });

  describe('when the password is only inside redis.url', () => {
    it('authenticates with it', async () => {
      const { redis, errors } = clientFor({ SLUICE_REDIS_URL: `redis://:${PASSWORD}@127.0.0.1:${server.port}` });
      try {
        await readyOrErrors(redis, errors);
        expect(await redis.ping()).toBe('PONG');
      } finally {
        redis.disconnect();
      }
    });
  });
});

describe('a Redis with a password sluice does not know', () => {
  const RIGHT = 'auth-Pa55-w0rd-right';
  const WRONG = 'auth-Pa55-w0rd-wrong';
  let server: PrivateRedis;
  beforeAll(async () => {
    server = await startPrivateRedis({ password: RIGHT });
  });
  afterAll(async () => {
    await server?.stop();
  });

  describe('when AUTH fails and the client\'s errors are logged', () => {
    it('logs neither the password of redis.password nor the one inside redis.url', async () => {
      const settings = [
        { SLUICE_REDIS_URL: server.url, SLUICE_REDIS_PASSWORD: WRONG },
        { SLUICE_REDIS_URL: `redis://default:${WRONG}@127.0.0.1:${server.port}` },
      ];
      for (const env of settings) {
        const config = loadConfig({ env: { ...topics, ...env } });
        const lines: string[] = [];
        const logger = createLogger({ level: 'info', secrets: secretsOf(config), destination: { write: (line: string) => lines.push(line) } });
        const errors: Error[] = [];
        const redis = createRedisClient({ ...redisClientOptionsOf(config), onError: (error) => {
          errors.push(error);
          logger.warn({ err: error }, 'redis connection trouble');
          logger.warn({ err: error, url: config.redis.url }, 'with the URL');
        } });
        try {
          await waitFor(() => errors.some((e) => /WRONGPASS/.test(e.message)), { timeoutMs: 10_000, message: 'an AUTH failure' });
        } finally {
          redis.disconnect();
        }
        expect(lines.join('')).toMatch(/WRONGPASS/);
        expect(lines.join('')).not.toContain(WRONG);
      }
    });
  });
});

describe('a Redis Cluster that requires a password', () => {
  const CLUSTER_PASSWORD = 'auth-Pa55-w0rd-cluster';
  let server: PrivateRedis;
  beforeAll(async () => {
    server = await startPrivateRedis({ password: CLUSTER_PASSWORD, cluster: true });
  });
  afterAll(async () => {
    await server?.stop();
  });

  describe('when redis.clusterNodes and redis.password are set', () => {
    it('authenticates every node connection and the limiter decides through the cluster', async () => {
      const { redis, errors } = clientFor({ SLUICE_REDIS_CLUSTER_NODES: `127.0.0.1:${server.port}`, SLUICE_REDIS_PASSWORD: CLUSTER_PASSWORD });
      try {
        await readyOrErrors(redis, errors);
        await expect(decideOnce(redis)).resolves.toBeDefined();
      } finally {
        redis.disconnect();
      }
    });
  });
});
