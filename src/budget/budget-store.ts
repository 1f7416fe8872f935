/**
 * The budget's state in Redis, apart from the producers' keys (its own Cluster slot:
 * `<prefix>budget:{<group>}` and `…:follow`): one call per replica per cadence
 * (budget-exchange-2.lua). What other replicas reported is checked before it is believed.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Cluster, Redis } from 'ioredis';
import { DECREASE, FLOOR, FOLLOW_MS, INCREASE } from './aimd';
import { MAX_REPORTED, type DemandReport } from './demand-meter';

export interface Exchange {
  /** Redis's clock at the call. */
  now: number;
  /** Every live replica's reports, this one's included. */
  replicas: DemandReport[][];
  /** The followed budget rate, when the budget follows a group. */
  followed?: number;
}

export interface BudgetStore {
  exchange(request: { reports: readonly DemandReport[]; lagging?: boolean; follow?: { rate: number } }): Promise<Exchange>;
}

type ExchangeCommand = (k1: string, k2: string, ...args: string[]) => Promise<string[]>;

let source: string | undefined;

/** The group as a hash tag: `%`, `{` and `}` percent-escaped, so no two group ids share one budget. */
const tagOf = (group: string): string => group.replace(/[%{}]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

export const budgetKeys = (keyPrefix: string, group: string): [string, string] => {
  const tag = `${keyPrefix}budget:{${tagOf(group)}}`;
  return [tag, `${tag}:follow`];
};

/** A report as another replica wrote it: [producer, rate, bytes, 0|1] tuples; anything else is dropped. */
export const readPayload = (payload: string): DemandReport[] => {
  let parsed: unknown;
  try {
    parsed = JSON.parse(payload);
  } catch {
    return [];
  }
  if (!Array.isArray(parsed)) return [];
  const reports: DemandReport[] = [];
  for (const item of parsed.slice(0, MAX_REPORTED)) {
    if (!Array.isArray(item) || item.length !== 4) continue;
    const [producer, rate, bytes, backlogged] = item as unknown[];
    if (typeof producer !== 'string' || typeof rate !== 'number' || typeof bytes !== 'number') continue;
    if (!(rate >= 0 && rate < 1e9 && bytes >= 0 && bytes < 1e15)) continue;
    reports.push({ producer, rate, bytes, backlogged: backlogged === 1 });
  }
  return reports;
};

export const writePayload = (reports: readonly DemandReport[]): string =>
  JSON.stringify(reports.map((r) => [r.producer, Math.round(r.rate * 1000) / 1000, Math.round(r.bytes), r.backlogged ? 1 : 0]));

/** Defines the command on the client; call before the client's auto-pipelines start filling (see src/usage/usage-script.ts). */
export const createBudgetStore = ({ redis, keyPrefix, group, replica, ttlMs }: {
  redis: Redis | Cluster;
  keyPrefix: string;
  group: string;
  replica: string;
  ttlMs: number;
}): BudgetStore => {
  source ??= readFileSync(path.join(__dirname, 'lua', 'budget-exchange-2.lua'), 'utf8');
  redis.defineCommand('sluiceBudgetExchange', { numberOfKeys: 2, lua: source });
  const call = (redis as unknown as { sluiceBudgetExchange: ExchangeCommand }).sluiceBudgetExchange.bind(redis);
  const [reportsKey, followKey] = budgetKeys(keyPrefix, group);
  return {
    async exchange({ reports, lagging, follow }) {
      const reply = await call(
        reportsKey, followKey, replica, String(ttlMs), writePayload(reports),
        lagging === undefined ? '' : lagging ? '1' : '0',
        follow ? String(follow.rate) : '', String(DECREASE), follow ? String(follow.rate * INCREASE) : '0', follow ? String(follow.rate * FLOOR) : '0', String(FOLLOW_MS),
      );
      const followed = Number(reply[1]);
      return {
        now: Number(reply[0]),
        replicas: reply.slice(2).map((payload) => readPayload(String(payload))),
        ...(reply[1] !== '' && followed > 0 ? { followed } : {}),
      };
    },
  };
};

/** What the replicas last reported and the followed rate, read-only (`sluice status`). */
export const readBudgetState = async (redis: Redis | Cluster, keyPrefix: string, group: string): Promise<{ replicas: DemandReport[][]; followed?: number }> => {
  const [reportsKey, followKey] = budgetKeys(keyPrefix, group);
  const [time, all, followed] = await Promise.all([redis.time(), redis.hgetall(reportsKey), redis.hget(followKey, 'rate')]);
  const now = Number(time[0]) * 1000 + Math.floor(Number(time[1]) / 1000);
  const replicas: DemandReport[][] = [];
  for (const value of Object.values(all)) {
    const sep = value.indexOf('|');
    if (sep > 0 && Number(value.slice(0, sep)) >= now) replicas.push(readPayload(value.slice(sep + 1)));
  }
  return { replicas, ...(followed !== null && Number(followed) > 0 ? { followed: Number(followed) } : {}) };
};
