/**
 * Parking a message: which retry tier, the `sluice-*` headers it carries, and the Kafka message
 * that parks (or dead-letters) it.
 *
 * Retry tiers: one topic per fixed delay (`<retry>.5s`, `<retry>.1m`, …). Every message in a
 * tier waits the same time, so a tier partition is due in append order. A message is parked
 * on the largest tier not longer than its wait and hops down the tiers until it is due.
 *
 * The `sluice-*` headers of docs/contract.md "Messages": how a parked (or dead-lettered) message
 * says who sent it, how often it was decided, when it may leave and why it waits. Pure
 * codecs: encoding never loses the user's headers (order and repeated keys kept), decoding
 * never throws — a header that does not parse yields a `malformed` result, which the drainer
 * treats as due and decides again (and counts).
 *
 * The Kafka message that parks (or dead-letters) one message of a producer: the user's key,
 * value and headers kept, the sluice headers added, the current time as timestamp (so
 * retention counts from parking), and the partition picked from the producer id, so all
 * of one producer's parked messages share one partition per tier.
 */
import type { Message } from 'kafkajs';
import { formatDuration } from '../config/units';
import { SluiceError } from '../errors';
import { appendHeaders, asKafkaHeaders, headerValues, isSluiceName, withoutSluiceHeaders, type Header, type HeaderList } from '../headers/header-list';
import { partitionForKey } from './murmur2';

export interface Tier {
  topic: string;
  delayMs: number;
  /** The delay as a short label, e.g. "5s", "1m", "10m", "1h", "1500ms". */
  label: string;
}

/** The shortest exact label of a duration (5000 → "5s"): the same spelling the settings use. */
export { formatDuration };

export const tierTopic = (retryBase: string, delayMs: number): string => `${retryBase}.${formatDuration(delayMs)}`;

/** The tiers in ascending order of delay; delays must be positive integers, duplicates are merged. */
export const buildTiers = (retryBase: string, delaysMs: readonly number[]): Tier[] => {
  if (delaysMs.length === 0) {
    throw new SluiceError('CONFIG_INVALID', 'retry.tiers: expected at least one delay, got none');
  }
  const bad = delaysMs.find((d) => !Number.isSafeInteger(d) || d <= 0);
  if (bad !== undefined) {
    throw new SluiceError('CONFIG_INVALID', `retry.tiers: expected positive whole milliseconds, got ${bad}`);
  }
  return [...new Set(delaysMs)]
    .sort((a, b) => a - b)
    .map((delayMs) => ({ topic: tierTopic(retryBase, delayMs), delayMs, label: formatDuration(delayMs) }));
};

/** The largest tier not longer than the wait; the smallest tier when the wait is shorter than all. */
export const chooseTier = (tiers: readonly Tier[], waitMs: number): Tier => {
  let chosen = tiers[0];
  for (const tier of tiers) if (tier.delayMs <= waitMs) chosen = tier;
  return chosen;
};

/** The largest tier not longer than the wait, or undefined when every tier is longer. */
export const tierAtMost = (tiers: readonly Tier[], waitMs: number): Tier | undefined =>
  [...tiers].reverse().find((tier) => tier.delayMs <= waitMs);

/** When a message appended to a tier at `timestampMs` (its Kafka timestamp) is due. */
export const tierDueAt = (tier: Tier, timestampMs: number): number => timestampMs + tier.delayMs;

export const tierOfTopic = (tiers: readonly Tier[], topic: string): Tier | undefined =>
  tiers.find((tier) => tier.topic === topic);

export const H = {
  producer: 'sluice-producer',
  attempt: 'sluice-attempt',
  notBefore: 'sluice-not-before',
  firstSeen: 'sluice-first-seen',
  timestamp: 'sluice-timestamp',
  origin: 'sluice-origin',
  reason: 'sluice-reason',
  waitedMs: 'sluice-waited-ms',
  deadLetterReason: 'sluice-dead-letter-reason',
  error: 'sluice-error',
} as const;

export type ParkReason =
  | { kind: 'delayed' }
  | { kind: 'overflow'; limit: string }
  | { kind: 'store-unavailable' };

export type DeadLetterReason = 'max-attempts' | 'max-age' | 'too-large' | 'unreadable';

export interface MessageOrigin {
  topic: string;
  partition: number;
  offset: string;
}

/** What a parked message carries besides the user's key, value and headers. */
export interface ParkInfo {
  producer: string;
  /** How many times this message has been decided (1 after the ingress decision). */
  attempt: number;
  notBefore: number;
  firstSeen: number;
  /** The original Kafka timestamp (epoch ms as a string), restored on forward. */
  timestamp: string;
  origin: MessageOrigin;
  reason: ParkReason;
  /** Why handling the record failed (dead-letter reason `unreadable`), written as `sluice-error`. */
  error?: string;
}

/** The result of reading a retry or dead-letter message's headers. */
export type DecodedPark =
  | { kind: 'valid'; info: ParkInfo; deadLetterReason?: DeadLetterReason; userHeaders: HeaderList }
  | {
      kind: 'malformed';
      /** Which headers did not parse, e.g. ["sluice-attempt: missing"]. */
      problems: string[];
      /** Whatever did parse, so the message can still be decided again. */
      partial: Partial<ParkInfo>;
      userHeaders: HeaderList;
    };

export const formatReason = (reason: ParkReason): string =>
  reason.kind === 'overflow' ? `overflow:${reason.limit}` : reason.kind;

export const formatOrigin = (origin: MessageOrigin): string => `${origin.topic}/${origin.partition}/${origin.offset}`;

/** The sluice headers of a parked message, as strings, in the order they are written. */
export const encodeParkHeaders = (info: ParkInfo): [string, string][] => {
  const headers: [string, string][] = [
    [H.producer, info.producer],
    [H.attempt, String(info.attempt)],
    [H.notBefore, String(info.notBefore)],
    [H.firstSeen, String(info.firstSeen)],
    [H.timestamp, info.timestamp],
    [H.origin, formatOrigin(info.origin)],
    [H.reason, formatReason(info.reason)],
  ];
  if (info.error !== undefined) headers.push([H.error, info.error]);
  return headers;
};

/** User headers first (order and repeated names kept, any `sluice-*` among them dropped), then the given sluice headers. */
export const withSluiceHeaders = (userHeaders: HeaderList, sluice: readonly (readonly [string, string])[]): HeaderList =>
  appendHeaders(userHeaders, sluice.map(([key, value]) => ({ key, value })));

/**
 * The headers sluice adds to every forward, as bytes: the name once, the header of each wait
 * under a second made once and shared. A forwarded record's list is then Buffers only, as the
 * decoder hands the user's, so kafkajs sizes and writes every header down one path (a string
 * among Buffers cost 0.3–0.8 µs a record in its encoder, docs/performance.md). Shared: read
 * by the encoder, never written (not frozen: a frozen object has another shape than the
 * decoder's headers, and the encoder's loop would see two).
 */
const WAITED_NAME = Buffer.from(H.waitedMs);
const ATTEMPT_NAME = Buffer.from(H.attempt);
const SHARED_WAITS = 1000;
const sharedWaited: Header[] = [];

/** The `sluice-waited-ms` header of a wait: whole milliseconds, never negative. */
export const waitedHeader = (waitedMs: number): Header => {
  const ms = Math.max(0, Math.round(waitedMs));
  if (ms >= SHARED_WAITS) return { key: WAITED_NAME, value: Buffer.from(String(ms)) };
  return sharedWaited[ms] ?? (sharedWaited[ms] = { key: WAITED_NAME, value: Buffer.from(String(ms)) });
};

/** Headers of a forwarded message: the user's, plus `sluice-waited-ms` and, after a retry, `sluice-attempt`. */
export const forwardHeaders = (userHeaders: HeaderList, waitedMs: number, attempt?: number): HeaderList =>
  appendHeaders(userHeaders, attempt === undefined ? [waitedHeader(waitedMs)] : [waitedHeader(waitedMs), { key: ATTEMPT_NAME, value: Buffer.from(String(attempt)) }]);

const text = (values: readonly Header['value'][]): string | undefined => {
  if (values.length !== 1 || values[0] === null) return undefined;
  const value = values[0];
  return typeof value === 'string' ? value : value.toString('utf8');
};

const INTEGER = /^(0|[1-9][0-9]{0,15})$/;

const parseInteger = (raw: string | undefined, min: number): number | undefined => {
  if (raw === undefined || !INTEGER.test(raw)) return undefined;
  const n = Number(raw);
  return Number.isSafeInteger(n) && n >= min ? n : undefined;
};

/** `topic/partition/offset`; topic names cannot contain a slash, but read from the right anyway. */
export const parseOrigin = (raw: string | undefined): MessageOrigin | undefined => {
  if (raw === undefined) return undefined;
  const parts = raw.split('/');
  if (parts.length < 3) return undefined;
  const offset = parts.pop() as string;
  const partition = parseInteger(parts.pop(), 0);
  const topic = parts.join('/');
  if (topic === '' || partition === undefined || !INTEGER.test(offset)) return undefined;
  return { topic, partition, offset };
};

export const parseReason = (raw: string | undefined): ParkReason | undefined => {
  if (raw === 'delayed' || raw === 'store-unavailable') return { kind: raw };
  if (raw?.startsWith('overflow:') && raw.length > 'overflow:'.length) {
    return { kind: 'overflow', limit: raw.slice('overflow:'.length) };
  }
  return undefined;
};

const DEAD_LETTER_REASONS: readonly string[] = ['max-attempts', 'max-age', 'too-large', 'unreadable'];

type Field = Exclude<keyof ParkInfo, 'error'>;

const readers: Record<Field, [string, (raw: string | undefined) => unknown]> = {
  producer: [H.producer, (raw) => (raw !== undefined && raw !== '' ? raw : undefined)],
  attempt: [H.attempt, (raw) => parseInteger(raw, 1)],
  notBefore: [H.notBefore, (raw) => parseInteger(raw, 0)],
  firstSeen: [H.firstSeen, (raw) => parseInteger(raw, 0)],
  timestamp: [H.timestamp, (raw) => (parseInteger(raw, 0) === undefined ? undefined : raw)],
  origin: [H.origin, parseOrigin],
  reason: [H.reason, parseReason],
};

/**
 * Reads a parked or dead-lettered message's headers. Never throws: a missing, repeated or
 * unparsable sluice header makes the result `malformed`, with whatever did parse.
 */
export const decodeParkHeaders = (headers: HeaderList): DecodedPark => {
  const userHeaders = withoutSluiceHeaders(headers).kept;
  const sluice = headers.filter((header) => isSluiceName(header.key));
  const partial: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [field, [key, read]] of Object.entries(readers)) {
    const values = headerValues(sluice, key);
    const value = read(text(values));
    if (value === undefined) problems.push(`${key}: ${describeBad(values)}`);
    else partial[field] = value;
  }
  const error = text(headerValues(sluice, H.error));
  if (error !== undefined) partial.error = error;
  const dlValues = headerValues(sluice, H.deadLetterReason);
  const dlRaw = text(dlValues);
  if (dlValues.length > 0 && (dlRaw === undefined || !DEAD_LETTER_REASONS.includes(dlRaw))) {
    problems.push(`${H.deadLetterReason}: ${describeBad(dlValues)}`);
  }
  if (problems.length > 0) return { kind: 'malformed', problems, partial: partial as Partial<ParkInfo>, userHeaders };
  const decoded: DecodedPark = { kind: 'valid', info: partial as unknown as ParkInfo, userHeaders };
  if (dlRaw !== undefined) decoded.deadLetterReason = dlRaw as DeadLetterReason;
  return decoded;
};

const describeBad = (values: readonly Header['value'][]): string => {
  if (values.length === 0) return 'missing';
  if (values.length > 1) return `repeated ${values.length} times`;
  const shown = text(values) ?? '';
  return `unreadable value ${JSON.stringify(shown.length > 40 ? `${shown.slice(0, 40)}…` : shown)}`;
};

/** What the user sent: kept as it was through parking and forwarding. */
export interface MessageContent {
  key: Buffer | string | null;
  value: Buffer | string | null;
  /** The user's headers, in order; any `sluice-*` header among them is dropped when written. */
  headers: HeaderList;
}

export const producerPartition = (producer: string, partitions: number): number => {
  if (!Number.isSafeInteger(partitions) || partitions < 1) {
    throw new SluiceError('INTERNAL', `a topic must have at least one partition, got ${partitions}`);
  }
  return partitionForKey(producer, partitions);
};

/** The message to write to a retry tier with `partitions` partitions. */
export const parkMessage = (content: MessageContent, info: ParkInfo, partitions: number, now: number): Message => ({
  key: content.key,
  value: content.value,
  headers: asKafkaHeaders(withSluiceHeaders(content.headers, encodeParkHeaders(info))),
  timestamp: String(now),
  partition: producerPartition(info.producer, partitions),
});

/** The message to write to the dead-letter topic: the park headers plus `sluice-dead-letter-reason`. */
export const deadLetterMessage = (
  content: MessageContent,
  info: ParkInfo,
  reason: DeadLetterReason,
  partitions: number,
  now: number,
): Message => ({
  key: content.key,
  value: content.value,
  headers: asKafkaHeaders(withSluiceHeaders(content.headers, [...encodeParkHeaders(info), [H.deadLetterReason, reason]])),
  timestamp: String(now),
  partition: producerPartition(info.producer, partitions),
});
