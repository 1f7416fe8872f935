/**
 * Loads usage-add.lua (./lua, copied beside dist by `npm run build`) once and registers it with
 * ioredis defineCommand, once per key count in use (`sluiceUsageAdd<n>`, n keys; the same
 * script, so Redis caches it once). A fixed key count matters on Redis Cluster: ioredis's
 * auto-pipelining groups a call by the slot of its first argument, which must be a key.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Cluster, Redis } from 'ioredis';

let source: string | undefined;

type UsageAdd = (...keysAndArgs: Array<string | number>) => Promise<number>;

/** Calls usage-add.lua with `keys` and `args` on the client, defining the command for this key count if needed. */
export const usageAdd = (client: Redis | Cluster, keys: readonly string[], args: ReadonlyArray<string | number>): Promise<number> => {
  const name = `sluiceUsageAdd${keys.length}`;
  if (!(name in client)) {
    source ??= readFileSync(path.join(__dirname, 'lua', 'usage-add.lua'), 'utf8');
    client.defineCommand(name, { numberOfKeys: keys.length, lua: source });
  }
  return (client as unknown as Record<string, UsageAdd>)[name](...keys, ...args);
};
