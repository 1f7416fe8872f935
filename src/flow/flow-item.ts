/**
 * One message as the flow carries it, and where it goes from there.
 *
 * **The item.** Whichever topic it was fetched from: the user's content (inbound `sluice-*`
 * headers dropped on ingress, sluice's own headers read off on a tier), who sent it, its size
 * as the byte bucket and the hold caps count it (key + value + headers), and its park info —
 * for an ingress message the info a first park would write (attempt 0: not decided yet).
 *
 * **The router** (pure): what happens to a message, from where it stands. An ingress message
 * is decided; a tier message whose turn came (src/flow/partition-pauser.ts) is released on its
 * reserved slot (`delayed`), waits in memory for its not-before, hops once to a tier that
 * brings it within hold.maxMs of it, or is decided again (`overflow`, a `delayed` one after a
 * real outage, malformed headers); a decision's verdict becomes a release, a park, a
 * dead-letter or — the store down under `park` on a tier — a stall. docs/design.md
 * "Kafka mechanics".
 *
 * Instants are on the store's clock (src/decide/store-clock.ts).
 */
import type { KafkaMessage } from 'kafkajs';
import { type RuleView, spacingOf, type Verdict } from '../decide/fetch-decider';
import { headerBytes, headerListOf, identify, type IdentityOptions, withoutSluiceHeaders, type HeaderList } from '../headers/header-list';
import { chooseTier, type DeadLetterReason, decodeParkHeaders, type DecodedPark, type MessageContent, type ParkInfo, type Tier } from '../park/park';

export interface FlowItem {
  topic: string;
  partition: number;
  offset: string;
  content: MessageContent;
  /** key + value + header bytes. */
  size: number;
  info: ParkInfo;
  /** Read from a retry tier (or the dead-letter topic by sluice drain); false for ingress. */
  fromTier: boolean;
  /** The sluice headers did not parse: decided again. */
  malformed?: string[];
  /** sluice drain of the dead-letter topic: decided again as new, whatever its headers say. */
  decideAgain?: boolean;
  /** Reading the record failed (the error): it is dead-lettered `unreadable`, its partition goes on. */
  unreadable?: string;
}

/** The key a rebalance uses to find what a partition owns. */
export const ownerOf = (topic: string, partition: number): string => `${topic}\u0000${partition}`;

const byteLength = (b: Buffer | string | null | undefined): number =>
  b === null || b === undefined ? 0 : Buffer.isBuffer(b) ? b.length : Buffer.byteLength(b);

const sizeOf = (message: KafkaMessage, headers: HeaderList): number =>
  byteLength(message.key) + byteLength(message.value) + headerBytes(headers);

/** The reason of every ingress message's info (not decided yet): one object for all, never changed. */
const NOT_DECIDED: ParkInfo['reason'] = Object.freeze({ kind: 'delayed' });

/** An ingress message; `forged.count` grows by the inbound `sluice-*` header values dropped. */
export const fromIngress = (
  message: KafkaMessage,
  where: { topic: string; partition: number },
  identity: IdentityOptions,
  now: number,
  forged: { count: number },
): FlowItem => {
  const { kept: headers, dropped } = withoutSluiceHeaders(headerListOf(message));
  forged.count += dropped;
  const content: MessageContent = { key: message.key, value: message.value, headers };
  const producer = identify({ key: message.key, headers }, identity);
  const item: FlowItem = {
    topic: where.topic,
    partition: where.partition,
    offset: message.offset,
    content,
    size: sizeOf(message, headers),
    fromTier: false,
    info: {
      producer,
      attempt: 0,
      notBefore: now,
      firstSeen: now,
      timestamp: message.timestamp,
      origin: { topic: where.topic, partition: where.partition, offset: message.offset },
      reason: NOT_DECIDED,
    },
  };
  return item;
};

const MAX_ERROR_LENGTH = 500;

const isBytes = (b: unknown): b is Buffer | string | null => b === null || typeof b === 'string' || Buffer.isBuffer(b);

/** The headers of a record that could not be read, as far as they are well-formed; none otherwise. */
const salvageHeaders = (message: KafkaMessage): HeaderList => {
  try {
    const list = headerListOf(message);
    return list.every((h) => (typeof h.key === 'string' || Buffer.isBuffer(h.key)) && isBytes(h.value)) ? list : [];
  } catch {
    return [];
  }
};

/**
 * A record that reading threw on (`error`): dead-lettered `unreadable` with the error in
 * `sluice-error`, its key, value and headers kept as far as they are well-formed, counted
 * under the fallback producer id.
 */
export const fromUnreadable = (
  message: KafkaMessage,
  where: { topic: string; partition: number },
  identity: IdentityOptions,
  now: number,
  error: unknown,
): FlowItem => {
  const text = (error instanceof Error ? `${error.name}: ${error.message}` : String(error)).slice(0, MAX_ERROR_LENGTH);
  const headers = salvageHeaders(message);
  const key = isBytes(message.key) ? message.key : null;
  const value = isBytes(message.value) ? message.value : null;
  const offset = String(message.offset);
  const timestamp = /^[0-9]{1,16}$/.test(String(message.timestamp)) ? String(message.timestamp) : String(now);
  return {
    topic: where.topic,
    partition: where.partition,
    offset,
    content: { key, value, headers },
    size: byteLength(key) + byteLength(value) + headerBytes(headers),
    fromTier: false,
    unreadable: text,
    info: {
      producer: identity.fallback,
      attempt: 0,
      notBefore: now,
      firstSeen: now,
      timestamp,
      origin: { topic: where.topic, partition: where.partition, offset },
      reason: NOT_DECIDED,
      error: text,
    },
  };
};

/** A message read back from a retry tier (or the dead-letter topic); malformed headers are repaired as far as possible. */
export const fromTier = (
  message: KafkaMessage,
  where: { topic: string; partition: number },
  identity: IdentityOptions,
  now: number,
): FlowItem => {
  const decoded = decodeParkHeaders(headerListOf(message));
  const content: MessageContent = { key: message.key ?? null, value: message.value ?? null, headers: decoded.userHeaders };
  const base = { topic: where.topic, partition: where.partition, offset: message.offset, content, size: sizeOf(message, decoded.userHeaders), fromTier: true };
  if (decoded.kind === 'valid') return { ...base, info: decoded.info };
  const fallback = {
    producer: identify({ key: content.key, headers: content.headers }, identity),
    timestamp: message.timestamp,
    origin: { topic: where.topic, partition: where.partition, offset: message.offset },
    now,
  };
  return { ...base, info: repairMalformed(decoded, fallback), malformed: decoded.problems };
};

// ---- The router ----

export interface RoutePolicy {
  /** Ascending by delay. */
  tiers: readonly Tier[];
  holdMaxMs: number;
  maxAttempts: number;
  maxAgeMs: number;
  /** false (sluice drain): a message not due yet waits in memory instead of hopping tiers. */
  hop: boolean;
}

export type Action =
  /** Decide (again); `asOf`: as of this instant (a retry a little late keeps its turn's time). */
  | { kind: 'decide'; asOf?: number }
  /**
   * Downstream at `at`, kept `spacingMs` after its producer's previous release. `slot`: the
   * limiter's instant when the decision came back after it (a slow round), `at` being now.
   */
  | { kind: 'release'; at: number; attempt: number; spacingMs: number; slot?: number }
  /** A tier write; `moved`: a hop or a park-back (no new outcome). */
  | { kind: 'park'; tier: Tier; info: ParkInfo; moved: boolean }
  /** Not due yet: wait in memory until `until`, then route again. */
  | { kind: 'wait'; until: number }
  | { kind: 'dead-letter'; reason: DeadLetterReason; info: ParkInfo }
  /** The store is down under limiter.onStoreError = park: leave it unread, pause its partition until `until`. */
  | { kind: 'stall'; until: number }
  /**
   * Wait in memory for the budget, behind its producer's earlier messages (src/budget/budget-queue.ts),
   * at most `maxWaitMs`; `otherwise` when the waiting room is full.
   */
  | { kind: 'wait-budget'; maxWaitMs: number; chunk: number; otherwise: Exclude<Action, { kind: 'wait-budget' }> };

/** A `delayed` message later than this after its slot lost it to an outage: it is decided again. */
export const OUTAGE_MS = 5000;

/**
 * A tier message found within hold.maxMs plus this of its not-before is kept in memory rather
 * than hopped. A hop appends it to a tier partition behind records whose turn may come as late
 * as that tier's delay after the hop; with less than this to spare it would be read after its
 * slot, behind its producer's next messages (out of order, and the slot lost).
 */
export const HOP_MARGIN_MS = 1000;

/** A retry decided at most this late is decided as of its not-before (its turn), so timer jitter wastes no slot. */
export const AS_OF_MS = 1000;

/** The tier of a first park: the largest not longer than the wait (its tier delay is over before it is due). */
export const parkTier = (tiers: readonly Tier[], waitMs: number): Tier => chooseTier(tiers, waitMs);

/**
 * The tier of a hop, `leftMs` before the not-before: the largest tier not longer than the time
 * left when that brings it within `holdMaxMs` of it; otherwise the shortest tier at least
 * `leftMs − holdMaxMs` long, from which it is read `holdMaxMs` ahead of its not-before — so a
 * parked message is written at most twice.
 */
export const hopTier = (tiers: readonly Tier[], leftMs: number, holdMaxMs: number): Tier => {
  const below = chooseTier(tiers, leftMs);
  if (below.delayMs <= leftMs && leftMs - below.delayMs <= holdMaxMs) return below;
  return tiers.find((tier) => tier.delayMs >= leftMs - holdMaxMs) ?? tiers[tiers.length - 1];
};

/** Whether deciding once more is still allowed; the dead-letter reason when it is not. */
export const limitReached = (info: Pick<ParkInfo, 'attempt' | 'firstSeen'>, now: number, policy: Pick<RoutePolicy, 'maxAgeMs' | 'maxAttempts'>): DeadLetterReason | undefined => {
  if (now - info.firstSeen > policy.maxAgeMs) return 'max-age';
  if (info.attempt >= policy.maxAttempts) return 'max-attempts';
  return undefined;
};

const spacing = (rule: RuleView): number => (rule.limit && !rule.unlimited ? spacingOf(rule.limit) : 0);

/** Decide now (every ingress message, a malformed or re-decided retry): one object for all, never changed. */
const DECIDE: Action = Object.freeze({ kind: 'decide' });

/** The first step for a message taken from its topic at `now`. */
export const firstStep = (item: { fromTier: boolean; info: ParkInfo; malformed?: string[]; decideAgain?: boolean; unreadable?: string }, now: number, policy: RoutePolicy, rule: RuleView): Action => {
  if (item.unreadable !== undefined) return { kind: 'dead-letter', reason: 'unreadable', info: item.info };
  if (!item.fromTier) return DECIDE;
  const { info } = item;
  const expired = limitReached(info, now, policy);
  if (item.malformed || item.decideAgain) return expired ? { kind: 'dead-letter', reason: expired, info } : DECIDE;
  // Past retry.maxAge nothing of it is written again, whatever its reason (a delayed message's
  // reserved slot included: it is dead-lettered rather than hopped or held, in sluice drain too).
  if (now - info.firstSeen > policy.maxAgeMs) return { kind: 'dead-letter', reason: 'max-age', info };
  const left = info.notBefore - now;
  if (left > policy.holdMaxMs + HOP_MARGIN_MS) {
    if (!policy.hop) return { kind: 'wait', until: info.notBefore };
    return { kind: 'park', tier: hopTier(policy.tiers, left, policy.holdMaxMs), info, moved: true };
  }
  if (info.reason.kind === 'delayed') {
    if (-left <= OUTAGE_MS) return { kind: 'release', at: Math.max(info.notBefore, now), attempt: info.attempt, spacingMs: spacing(rule), slot: undefined };
  } else if (left > 0) return { kind: 'wait', until: info.notBefore };
  if (expired) return { kind: 'dead-letter', reason: expired, info };
  return -left <= AS_OF_MS ? { kind: 'decide', asOf: info.notBefore } : { kind: 'decide' };
};

/** What a verdict means for a message, the budget aside. */
const settle = (item: { fromTier: boolean; info: ParkInfo }, verdict: Verdict, now: number, policy: RoutePolicy): Action => {
  const { info } = item;
  const attempt = info.attempt + 1;
  if (verdict.kind === 'forward') {
    const spacingMs = verdict.spacingMs ?? 0;
    // `slot` in both: one hidden class for every release (the dispatcher's code stays optimized).
    return verdict.at < now ? { kind: 'release', at: now, attempt, spacingMs, slot: verdict.at } : { kind: 'release', at: verdict.at, attempt, spacingMs, slot: undefined };
  }
  if (verdict.reason.kind === 'store-unavailable' && item.fromTier) return { kind: 'stall', until: verdict.notBefore };
  const parked: ParkInfo = { ...info, attempt, notBefore: verdict.notBefore, reason: verdict.reason };
  const tier = parkTier(policy.tiers, verdict.notBefore - now);
  if (verdict.reason.kind === 'overflow' && attempt >= policy.maxAttempts) return { kind: 'dead-letter', reason: 'max-attempts', info: parked };
  // A message that could only leave past retry.maxAge is not parked, delayed or refused.
  if (verdict.notBefore - info.firstSeen > policy.maxAgeMs) return { kind: 'dead-letter', reason: 'max-age', info: parked };
  return { kind: 'park', tier, info: parked, moved: false };
};

/**
 * What a decision means for a message (ingress: attempt 0 → 1; a retry: attempt + 1). `waits`
 * (the rule's, while a contended budget holds its producer back): a refusal by the rate or the
 * bytes waits in memory for the budget rather than being parked.
 */
export const afterVerdict = (item: { fromTier: boolean; info: ParkInfo }, verdict: Verdict, now: number, policy: RoutePolicy, waits?: RuleView['waits']): Action => {
  const action = settle(item, verdict, now, policy);
  if (!waits || verdict.kind !== 'park' || verdict.reason.kind !== 'overflow' || (verdict.reason.limit !== 'rate' && verdict.reason.limit !== 'bytes')) return action;
  return { kind: 'wait-budget', maxWaitMs: waits.maxWaitMs, chunk: waits.chunk, otherwise: action as Exclude<Action, { kind: 'wait-budget' }> };
};


/**
 * A malformed message is due and decided again; what did not parse is filled in so it can be
 * parked or dead-lettered with well-formed headers afterwards.
 */
export const repairMalformed = (
  decoded: Extract<DecodedPark, { kind: 'malformed' }>,
  fallback: { producer: string; timestamp: string; origin: ParkInfo['origin']; now: number },
): ParkInfo => ({
  producer: decoded.partial.producer ?? fallback.producer,
  attempt: decoded.partial.attempt ?? 1,
  notBefore: fallback.now,
  firstSeen: decoded.partial.firstSeen ?? fallback.now,
  timestamp: decoded.partial.timestamp ?? fallback.timestamp,
  origin: decoded.partial.origin ?? fallback.origin,
  reason: decoded.partial.reason ?? { kind: 'store-unavailable' },
});
