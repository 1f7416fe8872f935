/**
 * Loads usage-add.lua (./lua, copied beside dist by `npm run build`) once and registers it with
 * ioredis defineCommand as `sluiceUsageAdd`; the caller passes the key count.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Cluster, Redis } from 'ioredis';

let source: string | undefined;

export interface UsageCommands {
  sluiceUsageAdd(numberOfKeys: number, ...keysAndArgs: Array<string | number>): Promise<number>;
}

/** Registers the script on the client (idempotent) and returns it typed. */
export const defineUsageCommands = (client: Redis | Cluster): UsageCommands => {
  source ??= readFileSync(path.join(__dirname, 'lua', 'usage-add.lua'), 'utf8');
  if (!('sluiceUsageAdd' in client)) client.defineCommand('sluiceUsageAdd', { lua: source });
  return client as unknown as UsageCommands;
};
