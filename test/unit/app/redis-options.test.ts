/**
 * Every command reaches Redis with the options `sluice run` uses (redisClientOptionsOf, through
 * the wiring's createRedis): the URL whole, the cluster nodes, redis.password and TLS. The client
 * is stopped at its creation (no network in a unit test); what it was asked for is checked.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HandlerContext } from '../../../src/app/handlers';
import * as redisClient from '../../../src/limit/redis-client';
import { statusHandler } from '../../../src/status/status-handler';
import { usageHandler } from '../../../src/status/usage-handler';

const dir = mkdtempSync(join(tmpdir(), 'sluice-redis-options-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const quotasFile = join(dir, 'quotas.yaml');
writeFileSync(quotasFile, 'default:\n  rate: 10/s\n  queue: 1m\n');

const base = { SLUICE_INGRESS_TOPIC: 'events', SLUICE_DOWNSTREAM_TOPIC: 'events.out', SLUICE_QUOTAS_FILE: quotasFile, SLUICE_LOG_LEVEL: 'silent' };
const out = { write: () => true };

const context = (env: Record<string, string>): HandlerContext => ({ env: { ...base, ...env }, stopSignal: new Promise(() => undefined), stderr: out });

const commands: Array<[string, (env: Record<string, string>) => Promise<number>]> = [
  ['sluice usage', (env) => usageHandler(context(env), out)({ producer: 'billing', json: true })],
  ['sluice status', (env) => statusHandler(context(env), out)({ producer: 'billing' })],
];

describe.each(commands)('%s', (_name, run) => {
  let created: jest.SpyInstance;
  beforeEach(() => {
    created = jest.spyOn(redisClient, 'createRedisClient').mockImplementation(() => {
      throw new Error('stopped before connecting (unit test)');
    });
  });
  afterEach(() => created.mockRestore());

  describe('when redis.password is set and the URL is rediss://', () => {
    it('connects with the URL, the password and TLS, as sluice run does', async () => {
      await run({ SLUICE_REDIS_URL: 'rediss://redis.example:6380/2', SLUICE_REDIS_PASSWORD: 'pw-from-settings' });
      expect(created).toHaveBeenCalledTimes(1);
      expect(created.mock.calls[0][0]).toMatchObject({ url: 'rediss://redis.example:6380/2', password: 'pw-from-settings', tls: true });
    });
  });

  describe('when the password is inside redis.url', () => {
    it('passes the URL whole', async () => {
      await run({ SLUICE_REDIS_URL: 'redis://app:pw-in-url@redis.example:6379/0' });
      expect(created.mock.calls[0][0]).toMatchObject({ url: 'redis://app:pw-in-url@redis.example:6379/0', tls: false });
    });
  });

  describe('when the Redis is a cluster with redis.tls', () => {
    it('connects to the nodes with the password and TLS, and a one-shot timeout of at least 2 s', async () => {
      await run({ SLUICE_REDIS_CLUSTER_NODES: 'r-0:6379,r-1:6379', SLUICE_REDIS_PASSWORD: 'pw-2', SLUICE_REDIS_TLS: 'true' });
      expect(created.mock.calls[0][0]).toMatchObject({
        clusterNodes: [{ host: 'r-0', port: 6379 }, { host: 'r-1', port: 6379 }], password: 'pw-2', tls: true, timeoutMs: 2000,
      });
    });
  });
});
