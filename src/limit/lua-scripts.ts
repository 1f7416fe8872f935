/**
 * Loads the limiter's Lua scripts (src/limit/lua/<name>-<keys>.lua, copied beside dist by
 * `npm run build`) once and registers each with ioredis defineCommand as `sluice<Name>`, with
 * the key count taken from the file name. `sluiceDecideMany` (decide-many.lua, any number of
 * keys, given first in each call) runs decide-1.lua's text as a function once per key.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type Redis from 'ioredis';
import type { Cluster } from 'ioredis';

const SCRIPTS = ['decide-1.lua', 'inspect-1.lua'];

const sources = new Map<string, string>();

const sourceOf = (file: string): string => {
  let lua = sources.get(file);
  if (lua === undefined) {
    lua = readFileSync(path.join(__dirname, 'lua', file), 'utf8');
    sources.set(file, lua);
  }
  return lua;
};

const commandName = (file: string): { name: string; numberOfKeys: number } => {
  const match = /^([a-z-]+)-(\d+)\.lua$/.exec(file);
  if (!match) throw new Error(`Lua script ${file}: expected <name>-<keys>.lua`);
  const camel = match[1].replace(/(^|-)([a-z])/g, (_m, _dash, letter: string) => letter.toUpperCase());
  return { name: `sluice${camel}`, numberOfKeys: Number(match[2]) };
};

/** Registers every script on the client (idempotent); sources are read from disk once per process. */
export const defineLimiterCommands = (client: Redis | Cluster): void => {
  for (const file of SCRIPTS) {
    const { name, numberOfKeys } = commandName(file);
    client.defineCommand(name, { numberOfKeys, lua: sourceOf(file) });
  }
  client.defineCommand('sluiceDecideMany', { lua: `local function decide_key(KEYS, ARGV)\n${sourceOf('decide-1.lua')}\nend\n${sourceOf('decide-many.lua')}` });
};

/** The typed calls the store makes; ioredis adds these methods at run time. */
export interface LimiterCommands {
  sluiceDecide(key: string, ...args: Array<string | number>): Promise<number[]>;
  /** numberOfKeys, the keys, then what they share and per key its own (decide-many.lua's ARGV). */
  sluiceDecideMany(numberOfKeys: number, ...keysAndArgs: string[]): Promise<number[][]>;
  sluiceInspect(key: string, ...args: Array<string | number>): Promise<number[]>;
}
