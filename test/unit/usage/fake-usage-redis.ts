/**
 * An in-memory stand-in for the two Redis calls of the usage history, for unit tests that need
 * no Redis: the `sluiceUsageAdd<n>` commands defined on it do what usage-add.lua does (HINCRBY each pair, PEXPIREAT each key)
 * and records the call; `hgetall` answers from what was added, honouring the expiry by `clock`.
 * The real script is tested against Redis and Redis Cluster in test/integration/usage.
 */
import type { Clock } from '../../../src/clock';

export interface FakeUsageRedis {
  calls: Array<{ keys: string[]; args: Array<string | number> }>;
  hashes: Map<string, { fields: Map<string, number>; expireAt: number }>;
  failNext: number;
  defineCommand(name: string, definition: { numberOfKeys: number }): void;
  sluiceUsageAdd(numberOfKeys: number, ...rest: Array<string | number>): Promise<number>;
  hgetall(key: string): Promise<Record<string, string>>;
}

export const fakeUsageRedis = (clock: Clock): FakeUsageRedis => {
  const fake: FakeUsageRedis = {
    calls: [],
    hashes: new Map(),
    failNext: 0,
    defineCommand(name, { numberOfKeys }) {
      Object.assign(fake, { [name]: (...rest: Array<string | number>) => fake.sluiceUsageAdd(numberOfKeys, ...rest) });
    },
    async sluiceUsageAdd(numberOfKeys, ...rest) {
      if (fake.failNext > 0) {
        fake.failNext -= 1;
        throw new Error('Connection is closed.');
      }
      const keys = rest.slice(0, numberOfKeys).map(String);
      const args = rest.slice(numberOfKeys);
      fake.calls.push({ keys, args });
      let a = 0;
      let written = 0;
      for (const key of keys) {
        const expireAt = Number(args[a]);
        const n = Number(args[a + 1]);
        a += 2;
        const hash = fake.hashes.get(key) ?? { fields: new Map<string, number>(), expireAt };
        for (let j = 0; j < n; j += 1) {
          const field = String(args[a + 2 * j]);
          hash.fields.set(field, (hash.fields.get(field) ?? 0) + Number(args[a + 2 * j + 1]));
        }
        hash.expireAt = expireAt;
        if (expireAt > clock.now()) fake.hashes.set(key, hash);
        else fake.hashes.delete(key);
        written += n;
        a += 2 * n;
      }
      return written;
    },
    async hgetall(key) {
      const hash = fake.hashes.get(key);
      if (!hash || hash.expireAt <= clock.now()) return {};
      return Object.fromEntries([...hash.fields].map(([field, n]) => [field, String(n)]));
    },
  };
  return fake;
};
