/**
 * The rebalance hand-off by fact (docs/design.md "Kafka mechanics": rebalance without double work).
 *
 * RULE. Every partition a member owns has a fence in Redis, `<prefix>handoff:{<group>}:<topic>:<partition>`,
 * holding `<instance>:<memberId>` of its owner (instance: one random id per consumer, so a member
 * that rejoins under a new member id still owns its fences). The owner sets it when it gets the
 * partition and renews it every FENCE_TTL_MS / 3 (it expires FENCE_TTL_MS after its owner died).
 * A member that loses a partition releases its fence only after its final commit of that
 * partition (what it held parked, its writes acknowledged). A member that gains a partition
 * starts it only once the fence is free (absent, or already its own): it claims it, reads the
 * committed offset then, and starts from there — so nothing the old owner sent is sent again.
 *
 * BOUND. The wait is at most HANDOFF_BOUND_MS = SETTLE_MS (the longest the old owner waits for its
 * writes before it commits) + HANDOFF_MARGIN_MS (its commit, a scheduling delay, a slow Redis).
 * When it passes (an old owner stopped or dead, a commit that kept failing, Redis unreachable:
 * then every wait lasts the bound) the partition starts anyway from the offset committed then:
 * logged (warn) and counted (sluice_handoff_waits_expired_total{group,reason}). What the old
 * owner sent and had not committed may then be sent again (at-least-once).
 */
import { randomBytes } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Metrics } from '../metrics/types';
import { setTimerAfterIo, type Timer } from '../timers';

/** Longest a rebalance step waits for the sends under way to be acknowledged (src/flow/flow.ts). */
export const SETTLE_MS = 2000;
export const HANDOFF_MARGIN_MS = 1500;
export const HANDOFF_BOUND_MS = SETTLE_MS + HANDOFF_MARGIN_MS;
/** A fence outlives a dead owner by at most this (the session timeout: the group moves its partitions no sooner). */
export const FENCE_TTL_MS = 10_000;
const POLL_MS = 50;
/** One Redis call of the fence never waits longer than this. */
const CALL_MS = 500;

export interface Part {
  topic: string;
  partition: number;
}

/** Where fences are kept (Redis; a fake in tests). Values are `<instance>:<member>`; `instance` is the ownership. */
export interface FenceStore {
  /** Sets the fence to `value` when it is free or already this instance's; true when it is now this instance's. */
  claim(key: string, instance: string, value: string, ttlMs: number): Promise<boolean>;
  /** Deletes the fence when it is this instance's. */
  release(key: string, instance: string): Promise<void>;
}

const CLAIM = `local v = redis.call('get', KEYS[1])
if v == false or string.sub(v, 1, #ARGV[1]) == ARGV[1] then redis.call('set', KEYS[1], ARGV[2], 'PX', ARGV[3]) return 1 end
return 0`;
const RELEASE = `local v = redis.call('get', KEYS[1])
if v ~= false and string.sub(v, 1, #ARGV[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end
return 0`;

/** The call's answer, or a failure after `ms` (an answer that came while the process was stopped is read first). */
const within = <T>(work: Promise<T>, ms: number, what: string): Promise<T> => {
  let timer: Timer | undefined;
  return Promise.race([
    work,
    new Promise<never>((_, fail) => {
      timer = setTimerAfterIo(() => fail(new Error(`${what}: no answer from Redis within ${ms} ms`)), ms).unref();
    }),
  ]).finally(() => timer?.clear());
};

export const createRedisFenceStore = (redis: Redis | Cluster): FenceStore => ({
  claim: async (key, instance, value, ttlMs) =>
    Number(await within(redis.eval(CLAIM, 1, key, `${instance}:`, value, String(ttlMs)) as Promise<number>, CALL_MS, 'claiming a hand-off fence')) === 1,
  release: async (key, instance) => {
    await within(redis.eval(RELEASE, 1, key, `${instance}:`), CALL_MS, 'releasing a hand-off fence');
  },
});

export const fenceKey = (keyPrefix: string, group: string, { topic, partition }: Part): string =>
  `${keyPrefix}handoff:{${group}}:${topic}:${partition}`;

export interface AcquireResult {
  /** Partitions whose fence was not free within the bound (started anyway). */
  late: Part[];
  /** Why: the old owner did not release them, or Redis did not answer. */
  reason?: 'timeout' | 'store-error';
}

export interface HandoffFence {
  /**
   * Waits until every partition's fence is free or this member's, claiming each; at most
   * `boundMs`. A partition no longer `wanted` (lost again in a later rebalance) is waited for no
   * more, and neither counted late nor kept (a claim of it already made is the caller's to release).
   */
  acquire(member: string, parts: readonly Part[], boundMs?: number, wanted?: (part: Part) => boolean): Promise<AcquireResult>;
  /** This member owns these (kept in a rebalance, or gained alone in its group): set their fences now and keep renewing them. */
  own(member: string, parts: readonly Part[]): void;
  /** Renew only these from now on (the assignment): a fence of a partition lost is no longer renewed (it expires unless released first). */
  retain(parts: readonly Part[]): void;
  /** Its final commit of these is done: delete their fences (those still this instance's). */
  release(parts: readonly Part[]): Promise<void>;
  /** Stops renewing (fences then expire after FENCE_TTL_MS unless released). */
  close(): void;
}

export interface HandoffFenceOptions {
  /** Undefined: no store (a command without Redis): every gained partition waits the bound. */
  store?: FenceStore;
  keyPrefix: string;
  group: string;
  metrics: Pick<Metrics, 'handoffWaitExpired'>;
  logger: Logger;
  ttlMs?: number;
  pollMs?: number;
}

export const createHandoffFence = (options: HandoffFenceOptions): HandoffFence => {
  const { store, logger, group } = options;
  const ttlMs = options.ttlMs ?? FENCE_TTL_MS;
  const pollMs = options.pollMs ?? POLL_MS;
  const instance = randomBytes(6).toString('hex');
  const key = (part: Part): string => fenceKey(options.keyPrefix, group, part);
  /** The fences this instance holds and renews, by key: the value to renew them with. */
  const held = new Map<string, { part: Part; value: string }>();
  let storeTrouble = 0;
  const trouble = (error: unknown): void => {
    if (Date.now() - storeTrouble > 10_000) logger.warn({ err: error }, 'hand-off fences: Redis did not answer (partitions gained then wait the whole bound)');
    storeTrouble = Date.now();
  };
  const renew = (): void => {
    if (!store) return;
    for (const [k, { value }] of held) store.claim(k, instance, value, ttlMs).then((mine) => {
      // after an expired wait: the previous owner's fence, until it releases it or it expires
      if (!mine) logger.debug({ fence: k }, 'a hand-off fence of a partition this member owns is still held by another member');
    }, trouble);
  };
  const timer = setInterval(renew, Math.max(100, Math.floor(ttlMs / 3)));
  timer.unref();
  const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms).unref());

  return {
    async acquire(member, parts, boundMs = HANDOFF_BOUND_MS, wanted = () => true) {
      const deadline = Date.now() + boundMs;
      const value = `${instance}:${member}`;
      let waiting = [...parts];
      let failed = !store;
      while ((waiting = waiting.filter(wanted)).length > 0 && Date.now() < deadline) {
        if (store) {
          const results = await Promise.allSettled(waiting.map((part) => store.claim(key(part), instance, value, ttlMs)));
          failed = results.some((r) => r.status === 'rejected');
          const error = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
          if (error) trouble(error.reason);
          waiting = waiting.filter((_, i) => { const r = results[i]; return !(r?.status === 'fulfilled' && r.value); });
        }
        if (waiting.length > 0) await sleep(Math.min(pollMs, Math.max(0, deadline - Date.now())));
      }
      waiting = waiting.filter(wanted);
      for (const part of parts) if (wanted(part)) held.set(key(part), { part, value });
      if (waiting.length === 0) return { late: [] };
      const reason = failed ? 'store-error' : 'timeout';
      options.metrics.handoffWaitExpired?.(group, reason, waiting.length);
      logger.warn({ group, partitions: waiting, boundMs, reason },
        reason === 'timeout'
          ? 'partitions gained start without their previous owner\'s release: it did not finish with them within the hand-off bound (what it sent and had not committed may be sent again)'
          : 'partitions gained start after the whole hand-off bound: the fences could not be read (Redis down or no store)');
      renew(); // take them over
      return { late: waiting, reason };
    },
    own(member, parts) {
      const value = `${instance}:${member}`;
      for (const part of parts) held.set(key(part), { part, value });
      if (!store) return;
      for (const part of parts) store.claim(key(part), instance, value, ttlMs).catch(trouble);
    },
    retain(parts) {
      const keep = new Set(parts.map(key));
      for (const k of [...held.keys()]) if (!keep.has(k)) held.delete(k);
    },
    async release(parts) {
      for (const part of parts) held.delete(key(part));
      if (!store) return;
      const results = await Promise.allSettled(parts.map((part) => store.release(key(part), instance)));
      const error = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (error) trouble(error.reason);
    },
    close() {
      clearInterval(timer);
    },
  };
};
