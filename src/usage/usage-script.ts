/**
 * Loads usage-add.lua (./lua, copied beside dist by `npm run build`) once and registers it with
 * ioredis defineCommand once per key count (`sluiceUsageAdd<n>`, n keys, 1..MAX_KEYS_PER_CALL;
 * the same script, so Redis caches it once), all of them when the recorder starts: a command
 * defined later, while an auto-pipeline is being filled, is missing from that pipeline and
 * ioredis then throws outside any promise (the process exits). A fixed key count matters on
 * Redis Cluster: ioredis's auto-pipelining groups a call by the slot of its first argument,
 * which must be a key.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Cluster, Redis } from 'ioredis';
import { MAX_KEYS_PER_CALL } from './flush-plan';

let source: string | undefined;

type UsageAdd = (...keysAndArgs: Array<string | number>) => Promise<number>;

const commandName = (keyCount: number): string => `sluiceUsageAdd${keyCount}`;

/** Defines the usage commands on a client; call it before the client's first usage call. */
export const defineUsageCommands = (client: Redis | Cluster): void => {
  source ??= readFileSync(path.join(__dirname, 'lua', 'usage-add.lua'), 'utf8');
  for (let n = 1; n <= MAX_KEYS_PER_CALL; n += 1) client.defineCommand(commandName(n), { numberOfKeys: n, lua: source });
};

/** Calls usage-add.lua with `keys` (1..MAX_KEYS_PER_CALL, see defineUsageCommands) and `args` on the client. */
export const usageAdd = (client: Redis | Cluster, keys: readonly string[], args: ReadonlyArray<string | number>): Promise<number> => {
  const command = (client as unknown as Record<string, UsageAdd | undefined>)[commandName(keys.length)];
  if (!command) return Promise.reject(new Error(`usage history: no command for ${keys.length} keys (defineUsageCommands not called, or more than ${MAX_KEYS_PER_CALL} keys)`));
  return command.call(client, ...keys, ...args);
};
