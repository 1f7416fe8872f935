/**
 * limiter.onStoreError=local against a real Redis that stalls for less than timeoutMs + the
 * "not after" margin: the decide written meanwhile times out, the in-memory store answers it,
 * and Redis runs it when it resumes. The fallback must hand out the very slots Redis charged
 * (src/decide/schedule-ends.ts): it starts the producer where Redis left it, not empty.
 */
import Redis from 'ioredis';
import pino from 'pino';
import { systemClock } from '../../../src/clock';
import { createGuardedStore } from '../../../src/decide/fetch-decider';
import { createStoreClock } from '../../../src/decide/store-clock';
import { createMemoryStore } from '../../../src/limit/memory-store';
import { createRedisClient } from '../../../src/limit/redis-client';
import { createRedisStore } from '../../../src/limit/redis-store';
import { scaleRule } from '../../../src/limit/scale-rule';
import { noMetrics } from '../../../src/metrics/types';
import { ones, rule } from '../../contracts/limiter-harness';
import { startPrivateRedis, type PrivateRedis } from '../security/private-redis';
import { ready } from './redis-harness';

jest.setTimeout(60_000);

const spec = rule({ rate: '10/s', queue: '10s' });
const TIMEOUT_MS = 100;

describe('the local fallback when Redis runs a call after its caller gave up', () => {
  let server: PrivateRedis;
  let redis: Redis;
  let admin: Redis;
  beforeAll(async () => {
    server = await startPrivateRedis({ extraArgs: ['--enable-debug-command', 'local'] });
    redis = createRedisClient({ url: server.url, timeoutMs: TIMEOUT_MS }) as Redis;
    admin = server.admin();
    await ready(redis);
  });
  afterAll(async () => {
    redis?.disconnect();
    admin?.disconnect();
    await server?.stop();
  });

  it('admits the round in memory on the slots Redis charged for it, and Redis goes on after them', async () => {
    const clock = createStoreClock(systemClock);
    const store = createRedisStore({ redis, keyPrefix: 'fallback:', timeoutMs: TIMEOUT_MS, clock });
    const guarded = createGuardedStore({
      store, local: createMemoryStore({ clock }), policy: 'local', members: () => 1, scaleRule, clock, metrics: noMetrics,
      logger: pino({ level: 'silent' }), parkDelayMs: 5000,
    });
    const request = (k: number) => [{ producer: 'p', rule: spec, sizes: ones(k) }];
    // 20 slots: 2 s of them, longer than the stall, so the schedule is still ahead when Redis resumes.
    const [first] = await guarded.decideMany(request(20));
    clock.observe(first.now);
    const redisSlots = first.decisions.map((d) => d.at);
    expect(first.fallback).toBeUndefined();

    const sleeping = admin.call('DEBUG', 'SLEEP', '1');
    await new Promise((resolve) => setTimeout(resolve, 50));
    const [during] = await guarded.decideMany(request(3));
    await sleeping;
    expect(during.fallback).toBe(true);
    const memorySlots = during.decisions.map((d) => d.at);
    // Where Redis left the producer: one interval after its last slot, then one interval apart.
    expect(memorySlots).toEqual([1, 2, 3].map((k) => redisSlots[19] + k * spec.intervalMs));

    // Redis ran the stalled call (charging those three slots): its next slot follows the last one from memory.
    const [after] = await guarded.decideMany(request(1));
    expect(after.fallback).toBeUndefined();
    expect(after.decisions).toEqual([{ admitted: true, at: memorySlots[2] + spec.intervalMs }]);
  });
});
