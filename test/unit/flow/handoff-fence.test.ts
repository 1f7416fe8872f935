import pino from 'pino';
import { createHandoffFence, fenceKey, type FenceStore } from '../../../src/flow/handoff-fence';

/** Fences in memory with expiry (what Redis keeps); `down` makes every call fail. */
const memoryStore = () => {
  const values = new Map<string, { value: string; until: number }>();
  const state = { down: false, claims: 0 };
  const live = (key: string) => {
    const v = values.get(key);
    if (v && v.until <= Date.now()) values.delete(key);
    return values.get(key);
  };
  const store: FenceStore = {
    claim: async (key, instance, value, ttlMs) => {
      if (state.down) throw new Error('redis down');
      state.claims += 1;
      const v = live(key);
      if (v && !v.value.startsWith(`${instance}:`)) return false;
      values.set(key, { value, until: Date.now() + ttlMs });
      return true;
    },
    release: async (key, instance) => {
      if (state.down) throw new Error('redis down');
      if (live(key)?.value.startsWith(`${instance}:`)) values.delete(key);
    },
  };
  return { store, values, state, value: (key: string) => live(key)?.value };
};

const expired: [string, string, number][] = [];
const fenceOf = (store: FenceStore | undefined, ttlMs = 10_000) =>
  createHandoffFence({
    store, keyPrefix: 'sluice:', group: 'g', ttlMs, pollMs: 10, logger: pino({ level: 'silent' }),
    metrics: { handoffWaitExpired: (group, reason, count) => void expired.push([group, reason, count]) },
  });
const p0 = { topic: 't', partition: 0 };
const p1 = { topic: 't', partition: 1 };
const k0 = fenceKey('sluice:', 'g', p0);

const fences: ReturnType<typeof fenceOf>[] = [];
const make = (store: FenceStore | undefined, ttlMs?: number) => {
  const f = fenceOf(store, ttlMs);
  fences.push(f);
  return f;
};

afterEach(() => {
  expired.length = 0;
  for (const f of fences.splice(0)) f.close();
});

describe('the hand-off fence of a partition', () => {
  it('keys it by group, topic and partition, the group in a hash tag (one Redis Cluster slot per group)', () => {
    expect(k0).toBe('sluice:handoff:{g}:t:0');
  });

  it('is free for a new owner at once when nobody holds it, and then holds its member id', async () => {
    const m = memoryStore();
    const fence = make(m.store);
    const from = Date.now();
    expect(await fence.acquire('member-b', [p0, p1], 1_000)).toEqual({ late: [] });
    expect(Date.now() - from).toBeLessThan(100);
    expect(m.value(k0)).toMatch(/^[0-9a-f]+:member-b$/);
    expect(expired).toEqual([]);
  });

  it('makes a new owner wait until the old owner releases it, not longer', async () => {
    const m = memoryStore();
    const oldOwner = make(m.store);
    const newOwner = make(m.store);
    oldOwner.own('member-a', [p0]);
    await new Promise((resolve) => setImmediate(resolve));
    const from = Date.now();
    setTimeout(() => void oldOwner.release([p0]), 300);
    expect(await newOwner.acquire('member-b', [p0], 2_000)).toEqual({ late: [] });
    expect(Date.now() - from).toBeGreaterThanOrEqual(290);
    expect(Date.now() - from).toBeLessThan(1_000);
    expect(m.value(k0)).toMatch(/:member-b$/);
  });

  it('lets the new owner start when the bound passes, counted and said why (timeout), and takes the fence once it is free', async () => {
    const m = memoryStore();
    const oldOwner = make(m.store, 300);
    const newOwner = make(m.store, 300);
    oldOwner.own('member-a', [p0]);
    oldOwner.retain([]); // it lost the partition and stops renewing, but never releases it (stopped, dead)
    await new Promise((resolve) => setImmediate(resolve));
    const from = Date.now();
    expect(await newOwner.acquire('member-b', [p0, p1], 150)).toEqual({ late: [p0], reason: 'timeout' });
    expect(Date.now() - from).toBeGreaterThanOrEqual(145);
    expect(expired).toEqual([['g', 'timeout', 1]]);
    // the old fence expires (ttl 300 ms); the new owner's renewal then takes it
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(m.value(k0)).toMatch(/:member-b$/);
  });

  it('with Redis down waits the whole bound, then starts, counted as store-error', async () => {
    const m = memoryStore();
    m.state.down = true;
    const fence = make(m.store);
    const from = Date.now();
    expect(await fence.acquire('member-b', [p0], 200)).toEqual({ late: [p0], reason: 'store-error' });
    expect(Date.now() - from).toBeGreaterThanOrEqual(195);
    expect(expired).toEqual([['g', 'store-error', 1]]);
  });

  it('without a store (a command without Redis) waits the whole bound too', async () => {
    const fence = make(undefined);
    const from = Date.now();
    expect(await fence.acquire('member-b', [p0], 100)).toEqual({ late: [p0], reason: 'store-error' });
    expect(Date.now() - from).toBeGreaterThanOrEqual(95);
  });

  it('belongs to the consumer, not its member id: after a rejoin under a new id it is still its own', async () => {
    const m = memoryStore();
    const fence = make(m.store);
    fence.own('member-a', [p0]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(await fence.acquire('member-a2', [p0], 100)).toEqual({ late: [] });
    expect(m.value(k0)).toMatch(/:member-a2$/);
  });

  it('is released only by its owner', async () => {
    const m = memoryStore();
    const owner = make(m.store);
    const other = make(m.store);
    owner.own('member-a', [p0]);
    await new Promise((resolve) => setImmediate(resolve));
    await other.release([p0]);
    expect(m.value(k0)).toMatch(/:member-a$/);
    await owner.release([p0]);
    expect(m.value(k0)).toBeUndefined();
  });

  it('is renewed while owned and no more once the partition is lost (then it expires)', async () => {
    const m = memoryStore();
    const fence = make(m.store, 150);
    fence.own('member-a', [p0]);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(m.value(k0)).toMatch(/:member-a$/); // renewed every ttl / 3
    fence.retain([]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(m.value(k0)).toBeUndefined();
  });
});
