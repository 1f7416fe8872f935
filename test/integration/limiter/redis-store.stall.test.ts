/**
 * A Redis that stalls (here DEBUG SLEEP on a Redis of the test's own; in production a failover,
 * a fork, a paused container) holds up the decide calls written meanwhile. The caller gave up on
 * them after timeoutMs and routed their messages by limiter.onStoreError; when Redis resumes
 * they must not charge the producer as well (the chaos suite's redis-pause/park row: waits of
 * ~71 s after an 8 s stall). A call carries a "not after" instant on the store's clock
 * (timeoutMs + NOT_AFTER_MARGIN_MS), and one that runs later changes nothing. One that runs
 * within it charges the producer: under limiter.onStoreError=local the in-memory store must
 * then hand out the very slots Redis charged (src/decide/schedule-ends.ts).
 */
import Redis from 'ioredis';
import pino from 'pino';
import { systemClock } from '../../../src/clock';
import { createGuardedStore } from '../../../src/decide/fetch-decider';
import { createStoreClock } from '../../../src/decide/store-clock';
import { createMemoryStore } from '../../../src/limit/memory-store';
import { createRedisClient } from '../../../src/limit/redis-client';
import { NOT_AFTER_MARGIN_MS, createRedisStore } from '../../../src/limit/redis-store';
import { producerKey } from '../../../src/limit/producer-key';
import { scaleRule } from '../../../src/limit/scale-rule';
import { noMetrics } from '../../../src/metrics/types';
import { ones, rule } from '../../contracts/limiter-harness';
import { startPrivateRedis, type PrivateRedis } from '../security/private-redis';
import { ready } from './redis-harness';

jest.setTimeout(60_000);

const spec = rule({ rate: '10/s', queue: '10s' });
const TIMEOUT_MS = 100;

/** The store's clock as the wiring gives it: Redis TIME as this pod sees it (here: offset `skewMs`, learned from replies). */
const storeClock = (skewMs = 0) => {
  let offset = skewMs;
  const observed: number[] = [];
  return { now: () => Date.now() + offset, observe: (storeNow: number) => { observed.push(storeNow); offset = storeNow - Date.now(); }, observed };
};

describe('Redis store when Redis stalls longer than timeoutMs', () => {
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

  /** Stalls Redis for `ms` while one decide is written; resolves with its outcome and whether the producer was charged once Redis answered again. */
  const decideDuringStall = async (ms: number, producer: string) => {
    const store = createRedisStore({ redis, keyPrefix: 'stall:', timeoutMs: TIMEOUT_MS, clock: storeClock() });
    await store.decide({ producer: 'warm-up', rule: spec, sizes: [1] });
    const sleeping = admin.call('DEBUG', 'SLEEP', String(ms / 1000));
    await new Promise((resolve) => setTimeout(resolve, 50));
    const outcome = await store.decide({ producer, rule: spec, sizes: [1, 1, 1] }).then(() => 'decided', (e: Error) => e.message);
    await sleeping;
    // The same connection answers in order: once this GET is answered, the held-up call has run.
    const state = await redis.get(producerKey('stall:', producer));
    return { outcome, charged: state !== null };
  };

  it('a decide held up past timeoutMs + NOT_AFTER_MARGIN_MS fails at timeoutMs and changes nothing when Redis resumes', async () => {
    const { outcome, charged } = await decideDuringStall(TIMEOUT_MS + NOT_AFTER_MARGIN_MS + 1_000, 'held-long');
    expect(outcome).toMatch(/no answer within 100 ms/);
    expect(charged).toBe(false);
  });

  it('a decide held up for less than timeoutMs + NOT_AFTER_MARGIN_MS still runs (its caller already gave up: at most NOT_AFTER_MARGIN_MS of a stall is charged)', async () => {
    const { outcome, charged } = await decideDuringStall(1_000, 'held-short');
    expect(outcome).toMatch(/no answer within 100 ms/);
    expect(charged).toBe(true);
  });

  it('a decide queued behind an automatic pipeline in flight is not failed by a stall of this process while Redis answers', async () => {
    const store = createRedisStore({ redis, keyPrefix: 'busy:', timeoutMs: TIMEOUT_MS, clock: storeClock() });
    await store.decide({ producer: 'warm-up', rule: spec, sizes: [1] });
    const ahead = store.decide({ producer: 'ahead', rule: spec, sizes: [1] });
    // in the same automatic pipeline, a script that keeps Redis busy ~30 ms (no stall: Redis answers after it)
    const busyScript = redis.eval('for i = 1, 5000000 do end return 1', 0);
    await new Promise((resolve) => setImmediate(resolve)); // ioredis has written both
    const queued = store.decide({ producer: 'queued', rule: spec, sizes: [1] }); // waits for that pipeline's answer
    await new Promise((resolve) => setImmediate(resolve));
    const until = Date.now() + 2.5 * TIMEOUT_MS;
    while (Date.now() < until) {
      // this process busy (a large fetch decoded) while Redis answers the pipeline ahead
    }
    await expect(ahead).resolves.toMatchObject({ decisions: [{ admitted: true }] });
    await busyScript;
    await expect(queued).resolves.toMatchObject({ decisions: [{ admitted: true }] });
  });

  it('a store clock far behind Redis fails one call, learns the offset from its reply, and decides the next', async () => {
    const clock = storeClock(-60_000);
    const store = createRedisStore({ redis, keyPrefix: 'skew:', timeoutMs: 2_000, clock });
    await expect(store.decide({ producer: 'p', rule: spec, sizes: [1] })).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE', message: expect.stringMatching(/past its deadline/) });
    expect(await redis.get(producerKey('skew:', 'p'))).toBeNull();
    expect(clock.observed).toHaveLength(1);
    const decided = await store.decide({ producer: 'p', rule: spec, sizes: [1] });
    expect(decided.decisions).toEqual([{ admitted: true, at: expect.any(Number) }]);
  });

  it('under limiter.onStoreError=local, a decide held up but run admits its round in memory on the slots Redis charged, and Redis goes on after them', async () => {
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
