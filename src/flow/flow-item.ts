/**
 * One message as the flow carries it, whichever topic it was fetched from: the user's content
 * (inbound `sluice-*` headers dropped on ingress, sluice's own headers read off on a tier), who
 * sent it, its size as the byte bucket and the hold caps count it (key + value + headers), and
 * its park info — for an ingress message the info a first park would write (attempt 0: not
 * decided yet). Instants are on the store's clock (src/decide/store-clock.ts).
 */
import type { KafkaMessage } from 'kafkajs';
import { headerBytes, headerListOf, identify, type IdentityOptions, withoutSluiceHeaders, type HeaderList } from '../headers/header-list';
import { decodeParkHeaders, type MessageContent, type ParkInfo } from '../park/park';
import { repairMalformed } from './route';

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
