/**
 * The Redis store: the limiter in Redis, shared by every replica. One script call
 * (./lua/decide-1.lua) per decide(), for all of a producer's messages, on one hash-tagged key
 * per producer; on a standalone Redis one call for a round of producers (decideMany,
 * ./lua/decide-many.lua, what they share sent once). Time is Redis TIME unless the request
 * passes `now`. A call that fails or takes longer than timeoutMs (counted from its write, as
 * ioredis's automatic pipelines write it: ./answer-timeout.ts) surfaces as a retriable
 * SluiceError STORE_UNAVAILABLE and is never retried here (it may have run). A call stuck
 * behind a stalled Redis would still run once Redis resumes and charge the producer for messages
 * the store-error policy has already routed: each call carries a "not after" instant on the
 * store's clock (timeoutMs + NOT_AFTER_MARGIN_MS from now), and one that runs later changes
 * nothing. Its twin in memory: ./memory-store.ts.
 */
import type Redis from 'ioredis';
import type { Cluster } from 'ioredis';
import { SluiceError } from '../errors';
import { reasonOf as refusalOf } from './algorithms/decide-batch';
import { createAnswerClock, type AnswerClock } from './answer-timeout';
import { defineLimiterCommands, type LimiterCommands } from './lua-scripts';
import { fingerprintDigits, producerKey } from './producer-key';
import type { BatchDecision, Decision, DecideRequest, LimiterStore, LimitRule, ProducerState } from './types';

export interface RedisStoreOptions {
  redis: Redis | Cluster;
  keyPrefix: string;
  timeoutMs: number;
  /**
   * The store's clock (Redis TIME as this pod sees it, src/decide/store-clock.ts): with it, a
   * decide() has a "not after" instant. A late reply is observed too, so a clock that was off
   * (Redis's time far ahead of this pod's before the first reply) is right from the next call.
   */
  clock?: { now(): number; observe(storeNow: number): void };
}

/**
 * How long past timeoutMs a decide() may still run. Wide enough for an event loop busy between the
 * call and its write (answer-timeout.ts starts the timeout at the write; seconds would be
 * pathological), narrow enough that a Redis stall charges at most this much of what it held up.
 */
export const NOT_AFTER_MARGIN_MS = 2_000;

const KINDS = { log: 'l', sliding: 's', fixed: 'f' } as const;

/** The ARGV of decide-1.lua after `now`, cached per rule (rules are immutable once compiled). */
const ruleArgs = (cache: WeakMap<LimitRule, string[]>, rule: LimitRule): string[] => {
  let args = cache.get(rule);
  if (args === undefined) {
    args = [
      fingerprintDigits(rule.fingerprint),
      rule.algorithm === 'token-bucket' ? 't' : 'l',
      String(rule.intervalMs),
      String(rule.capacityMs),
      rule.byteIntervalMs === undefined ? '' : String(rule.byteIntervalMs),
      rule.windows.map((w) => `${w.max}:${w.windowMs}:${KINDS[w.kind]}`).join(','),
    ];
    cache.set(rule, args);
  }
  return args;
};

const withTimeout = async <T>(call: Promise<T>, answers: AnswerClock, what: string): Promise<T> => {
  try {
    return await answers.within(call);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new SluiceError('STORE_UNAVAILABLE', `Redis ${what} failed: ${reason}`, { retriable: true, cause: error });
  }
};

/** The first k decisions of a reply (a lease's start and count may follow them). */
const toDecisions = (rule: LimitRule, reply: number[], k: number): Decision[] => {
  const decisions: Decision[] = [];
  for (let i = 1; i < 1 + 2 * k; i += 2) {
    const code = Number(reply[i]);
    const at = Number(reply[i + 1]);
    decisions.push(code === 0 ? { admitted: true, at } : { admitted: false, at, reason: refusalOf(rule, code - 1) });
  }
  return decisions;
};

export const createRedisStore = ({ redis, keyPrefix, timeoutMs, clock }: RedisStoreOptions): LimiterStore => {
  defineLimiterCommands(redis);
  const commands = redis as unknown as LimiterCommands;
  const cache = new WeakMap<LimitRule, string[]>();
  const answers = createAnswerClock(timeoutMs);

  const notAfterOf = (now: number | undefined): string => (clock === undefined ? '' : String(Math.floor((now ?? clock.now()) + timeoutMs + NOT_AFTER_MARGIN_MS)));
  /** decide-1.lua's ARGV for one request. */
  const argsOf = ({ rule, sizes, now, asOf, lease }: DecideRequest, notAfter: string): string[] => {
    const args = [now === undefined ? '' : String(now), ...ruleArgs(cache, rule), String(sizes.length), notAfter, asOf === undefined ? '' : String(asOf), lease ? String(lease) : ''];
    if (rule.byteIntervalMs !== undefined) for (const size of sizes) args.push(String(size));
    return args;
  };
  const replyOf = ({ rule, sizes }: DecideRequest, reply: number[], notAfter: string): BatchDecision => {
    if (Number(reply[1]) === -1) {
      clock?.observe(Number(reply[0]));
      const late = Number(reply[0]) - Number(notAfter);
      throw new SluiceError('STORE_UNAVAILABLE', `Redis decide ran ${late} ms past its deadline (Redis was stalled) and changed nothing`, { retriable: true });
    }
    const k = sizes.length;
    const decided = { now: Number(reply[0]), decisions: toDecisions(rule, reply, k) };
    return reply.length > 1 + 2 * k ? { ...decided, lease: { start: Number(reply[1 + 2 * k]), count: Number(reply[2 + 2 * k]) } } : decided;
  };

  const decide = async (request: DecideRequest): Promise<BatchDecision> => {
    if (request.sizes.length === 0 && !request.lease) return { now: request.now ?? Date.now(), decisions: [] };
    const notAfter = notAfterOf(request.now);
    const reply = await withTimeout(commands.sluiceDecide(producerKey(keyPrefix, request.producer), ...argsOf(request, notAfter)), answers, 'decide');
    return replyOf(request, reply, notAfter);
  };

  /**
   * One call for requests sharing an instant (decide-many.lua): what they share is sent once —
   * the instant, the "not after", each distinct rule — and per producer its key, rule, count, as-of
   * and lease (and sizes, for a byte bucket): a round of 100 producers on one rule is 510
   * arguments, not 1,300, and building a call costs ioredis about 0.2 µs an argument.
   */
  const decideAt = async (requests: readonly DecideRequest[], now: number | undefined): Promise<BatchDecision[]> => {
    const notAfter = notAfterOf(now);
    const rules = new Map<LimitRule, string>();
    const shared: string[] = [];
    const own: string[] = [];
    for (const { rule, sizes, asOf, lease } of requests) {
      let index = rules.get(rule);
      if (index === undefined) {
        rules.set(rule, (index = String(rules.size + 1)));
        for (const field of ruleArgs(cache, rule)) shared.push(field);
      }
      own.push(index, String(sizes.length), asOf === undefined ? '' : String(asOf), lease ? String(lease) : '');
      if (rule.byteIntervalMs !== undefined) for (const size of sizes) own.push(String(size));
    }
    // KEYS, then ARGV: one array, spread once.
    const argv: string[] = requests.map(({ producer }) => producerKey(keyPrefix, producer));
    argv.push(now === undefined ? '' : String(now), notAfter, String(rules.size));
    for (const field of shared) argv.push(field);
    for (const field of own) argv.push(field);
    const replies = await withTimeout(commands.sluiceDecideMany(requests.length, ...argv), answers, 'decide');
    return requests.map((request, i) => replyOf(request, replies[i], notAfter));
  };

  // One script call for them all: a call per producer costs this process ~20 µs more CPU
  // (bench/micro/decide-round.ts). A round's requests share an instant (none: Redis's time);
  // requests at different instants (tests) are one call per instant. Not on a Cluster: it keeps
  // every producer in its own hash slot, and one script's keys must share one (there, a call each).
  const decideMany = async (requests: readonly DecideRequest[]): Promise<BatchDecision[]> => {
    const byNow = new Map<number | undefined, number[]>();
    requests.forEach(({ now }, i) => {
      const indexes = byNow.get(now);
      if (indexes) indexes.push(i);
      else byNow.set(now, [i]);
    });
    if (byNow.size === 1) return decideAt(requests, requests[0].now);
    const replies: BatchDecision[] = [];
    await Promise.all([...byNow].map(async ([now, indexes]) => {
      const decided = await decideAt(indexes.map((i) => requests[i]), now);
      indexes.forEach((i, j) => (replies[i] = decided[j]));
    }));
    return replies;
  };

  const inspect = async (producer: string, rule: LimitRule, now?: number): Promise<ProducerState> => {
    const bound = String(rule.capacityMs + rule.intervalMs);
    const call = commands.sluiceInspect(producerKey(keyPrefix, producer), now === undefined ? '' : String(now), bound);
    const [at, next] = (await withTimeout(call, answers, 'inspect')).map(Number);
    if (next <= at) return { producer, backlogMs: 0, now: at };
    return { producer, nextFreeAt: next, backlogMs: next - at, now: at };
  };

  return { decide, ...(redis.isCluster ? {} : { decideMany }), inspect, close: async () => undefined };
};
