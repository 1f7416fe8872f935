/**
 * The downstream budget's Redis side (src/budget/budget-store.ts, lua/budget-exchange-2.lua) on a
 * real Redis and a real Redis Cluster. Proves: two replicas of a group see each other's reports
 * exactly as written (rates rounded as writePayload does), and readBudgetState sees the same; a
 * replica that stops reporting is dropped once its ttl has passed, not before; forged or garbage
 * reports written by a hostile client are dropped entry by entry and never throw; `follow` takes
 * at most one AIMD step per FOLLOW_MS across replicas (×DECREASE while lagging, +INCREASE × rate
 * otherwise), never above the rate nor below FLOOR × rate; on the Cluster both keys share one
 * slot, also for groups whose names contain braces. Every test uses its own key prefix and
 * deletes its keys.
 */
import type { Cluster, Redis } from 'ioredis';
import { aimdStep, DECREASE, FLOOR, FOLLOW_MS, INCREASE } from '../../../src/budget/aimd';
import { budgetKeys, createBudgetStore, readBudgetState, writePayload, type Exchange } from '../../../src/budget/budget-store';
import { MAX_REPORTED, type DemandReport } from '../../../src/budget/demand-meter';
import { createRedisClient } from '../../../src/limit/redis-client';
import { randomKeyPrefix, redisClusterNodes, redisUrl } from '../../helpers/redis';
import { waitFor } from '../../helpers/wait';
import { ready } from '../limiter/redis-harness';

// the integration project's testTimeout is not applied per project: set it here
jest.setTimeout(60_000);

const RATE = 1000;
const follow = { rate: RATE };
const fromA: DemandReport[] = [
  { producer: 'alpha', rate: 123.45678, bytes: 4096.6, backlogged: true },
  { producer: 'bé|{x}"', rate: 0.0004, bytes: 0, backlogged: false },
];
const fromB: DemandReport[] = [{ producer: 'beta', rate: 7, bytes: 1e6, backlogged: false }];
// what the others read back: rates to 1/1000, bytes to units
const readA = [{ producer: 'alpha', rate: 123.457, bytes: 4097, backlogged: true }, { producer: 'bé|{x}"', rate: 0, bytes: 0, backlogged: false }];
const readB = [{ producer: 'beta', rate: 7, bytes: 1e6, backlogged: false }];

/** Replicas' reports in a stable order (Redis's hash order is not promised). */
const sorted = (replicas: DemandReport[][]): DemandReport[][] =>
  [...replicas].sort((x, y) => (x[0]?.producer ?? '').localeCompare(y[0]?.producer ?? ''));

const byName = (reports: DemandReport[]): DemandReport[] => [...reports].sort((x, y) => x.producer.localeCompare(y.producer));

const backends: Array<[string, () => Redis | Cluster]> = [
  ['Redis', () => createRedisClient({ url: redisUrl(), timeoutMs: 2000 })],
  ['Redis Cluster', () => createRedisClient({ clusterNodes: redisClusterNodes(), timeoutMs: 2000 })],
];

describe.each(backends)('the budget store on %s', (_name, connect) => {
  let redis: Redis | Cluster;
  const used: Array<[string, string]> = [];
  beforeAll(async () => {
    redis = connect();
    await ready(redis);
  });
  afterEach(async () => {
    for (const keys of used.splice(0)) await redis.del(...keys);
  });
  afterAll(() => redis.quit());

  /** A group under a fresh key prefix (its keys deleted after the test) and its replicas. */
  const fresh = (group = 'orders') => {
    const keyPrefix = randomKeyPrefix('budget');
    const keys = budgetKeys(keyPrefix, group);
    used.push(keys);
    return {
      keys,
      replica: (replica: string, ttlMs = 2000) => createBudgetStore({ redis, keyPrefix, group, replica, ttlMs }),
      state: () => readBudgetState(redis, keyPrefix, group),
    };
  };

  it('two replicas each see both reports as written, and readBudgetState sees the same', async () => {
    const g = fresh();
    const [a, b] = [g.replica('a'), g.replica('b')];
    await a.exchange({ reports: fromA });
    const seenByB = await b.exchange({ reports: fromB });
    const seenByA = await a.exchange({ reports: fromA });
    for (const seen of [seenByA.replicas, seenByB.replicas, (await g.state()).replicas]) expect(sorted(seen)).toEqual([readA, readB]);
    const raw = (await redis.hget(g.keys[0], 'a')) ?? '';
    const sep = raw.indexOf('|');
    expect([raw.slice(0, sep), raw.slice(sep + 1)]).toEqual([expect.stringMatching(/^\d+$/), writePayload(fromA)]);
    expect(seenByA.now).toBeGreaterThanOrEqual(seenByB.now);
    expect(seenByA.followed).toBeUndefined();
  });

  it('a replica that stops reporting leaves the exchange once its ttl has passed, not before', async () => {
    const g = fresh();
    const [a, b] = [g.replica('a', 300), g.replica('b', 300)];
    await a.exchange({ reports: fromA });
    const last = await b.exchange({ reports: fromB });
    const seen: Exchange[] = [];
    await waitFor(async () => seen[seen.push(await a.exchange({ reports: fromA })) - 1]!.replicas.length === 1, { timeoutMs: 5000, intervalMs: 20, message: 'b to expire' });
    const after = seen.map((r) => ({ ms: r.now - last.now, replicas: r.replicas.length }));
    expect(after).toEqual(after.map(({ ms }) => ({ ms, replicas: ms > 300 ? 1 : 2 })));
    expect(seen.at(-1)!.replicas).toEqual([readA]);
    expect((await g.state()).replicas).toEqual([readA]);
    expect(await redis.hexists(g.keys[0], 'b')).toBe(0);
  });

  it('drops forged and garbage reports entry by entry, without throwing', async () => {
    const g = fresh();
    const far = '99999999999999|';
    await redis.hset(g.keys[0], {
      'not-json': `${far}{nope`,
      object: `${far}{"producer":"x","rate":1,"bytes":1,"backlogged":1}`,
      null: `${far}null`,
      shapes: `${far}${JSON.stringify([[1, 1, 1, 0], ['short', 1, 1], ['long', 1, 1, 0, 0], ['str', '5', 1, 0], 'flat', null, {}, ['ok', 2, 3, 1]])}`,
      huge: `${far}[["h1",1e9,1,0],["h2",1,1e15,0],["h3",1e999,1,0],["h4",1,1e999,0]]`,
      negative: `${far}[["n1",-1,1,0],["n2",1,-5,0]]`,
      many: far + JSON.stringify(Array.from({ length: MAX_REPORTED + 5 }, (_, i) => [`p${i}`, 1, 1, 0])),
      'no-expiry': '[["x",1,1,0]]',
      'bad-expiry': 'soon|[["x",1,1,0]]',
      empty: '',
    });
    const a = g.replica('a');
    for (const seen of [(await a.exchange({ reports: fromA })).replicas, (await g.state()).replicas]) {
      const flat = seen.flat();
      expect(flat.filter((r) => /^p\d+$/.test(r.producer))).toHaveLength(MAX_REPORTED);
      expect(byName(flat.filter((r) => !/^p\d+$/.test(r.producer)))).toEqual(byName([...readA, { producer: 'ok', rate: 2, bytes: 3, backlogged: true }]));
      expect(flat.every((r) => r.rate >= 0 && r.rate < 1e9 && r.bytes >= 0 && r.bytes < 1e15)).toBe(true);
    }
    // the script deleted what had no readable expiry
    expect(await redis.hmget(g.keys[0], 'no-expiry', 'bad-expiry', 'empty')).toEqual([null, null, null]);
  });

  it('follow: one ×DECREASE step per FOLLOW_MS across replicas while lagging, then +INCREASE × rate', async () => {
    const g = fresh();
    const replicas = [g.replica('a'), g.replica('b')];
    const first = await replicas[0]!.exchange({ reports: [], lagging: true, follow });
    expect(first.followed).toBe(RATE * DECREASE);
    expect((await replicas[1]!.exchange({ reports: [], lagging: true, follow })).followed).toBe(RATE * DECREASE);
    // both replicas keep saying what they see: the next step comes FOLLOW_MS after the first, not before
    let turn = 0;
    const until = async (lagging: boolean, from: Exchange): Promise<Exchange> => {
      const seen: Exchange[] = [];
      await waitFor(async () => seen[seen.push(await replicas[turn++ % 2]!.exchange({ reports: [], lagging, follow })) - 1]!.followed !== from.followed, { timeoutMs: 5000, intervalMs: 50, message: 'a step' });
      const step = seen.at(-1)!;
      expect(seen.length).toBeGreaterThan(4); // both replicas' verdicts in between took no step
      expect(step.now - from.now).toBeGreaterThanOrEqual(FOLLOW_MS);
      expect(step.followed).toBe(aimdStep(from.followed!, lagging, RATE));
      return step;
    };
    const down = await until(true, first);
    const up = await until(false, down);
    expect(up.followed).toBe(RATE * DECREASE * DECREASE + RATE * INCREASE);
    expect((await g.state()).followed).toBe(up.followed);
    expect((await replicas[0]!.exchange({ reports: [], follow })).followed).toBe(up.followed); // no verdict, no step
  });

  it('follow: never above the rate, never below FLOOR × rate', async () => {
    const g = fresh();
    const a = g.replica('a');
    const followedAfter = async (stored: number, lagging?: boolean) => {
      await redis.hset(g.keys[1], { rate: String(stored), at: '0' }); // the last step long ago
      return (await a.exchange({ reports: [], ...(lagging === undefined ? {} : { lagging }), follow })).followed;
    };
    expect(await followedAfter(RATE * FLOOR * 1.1, true)).toBe(RATE * FLOOR);
    expect(await followedAfter(RATE * FLOOR, true)).toBe(RATE * FLOOR);
    expect(await followedAfter(RATE * 0.98, false)).toBe(RATE);
    expect(await followedAfter(RATE, false)).toBe(RATE);
    expect(await followedAfter(RATE * 5)).toBe(RATE); // the configured rate was lowered
    expect((await a.exchange({ reports: [] })).followed).toBeUndefined(); // following nothing
  });

  it('groups that differ only in braces or escapes keep budgets of their own', () => {
    const groups = ['orders{1}', 'orders_1_', 'orders}1{', 'orders%7B1%7D', 'orders%1'];
    expect(new Set(groups.map((group) => budgetKeys('p:', group)[0])).size).toBe(groups.length);
  });

  it.each(['orders{eu}', '}{', '{', 'a{b}c}', '{}'])('group %j: both keys in one slot, and the exchange works', async (group) => {
    const g = fresh(group);
    expect(g.keys[0]).toMatch(/^[^{}]*\{[^{}]+\}[^{}]*$/);
    if (redis.isCluster) expect(await redis.cluster('KEYSLOT', g.keys[1])).toBe(await redis.cluster('KEYSLOT', g.keys[0]));
    const [a, b] = [g.replica('a'), g.replica('b')];
    await a.exchange({ reports: fromA, lagging: true, follow });
    const seen = await b.exchange({ reports: fromB, lagging: true, follow });
    expect(sorted(seen.replicas)).toEqual([readA, readB]);
    expect(seen.followed).toBe(RATE * DECREASE);
    expect(await g.state()).toEqual({ replicas: expect.any(Array), followed: RATE * DECREASE });
    expect(sorted((await g.state()).replicas)).toEqual([readA, readB]);
  });
});
