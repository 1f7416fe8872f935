/**
 * One message read back from a retry tier (or the dead-letter topic), and the Kafka messages
 * the drainer writes for it: forwarded downstream with its original timestamp restored, parked
 * again on a tier, or dead-lettered. Pure.
 */
import type { IHeaders, KafkaMessage, Message } from 'kafkajs';
import { identify, type IdentityOptions } from '../identify/identify';
import { decodeParkHeaders, forwardHeaders, type DeadLetterReason, type ParkInfo } from '../park/park-headers';
import { deadLetterMessage, type MessageContent, parkMessage } from '../park/park-message';
import { repairMalformed } from './retry-steps';

export interface RetryItem {
  topic: string;
  partition: number;
  offset: string;
  content: MessageContent;
  info: ParkInfo;
  /** Bytes the byte bucket charges (key + value), as at ingress. */
  size: number;
  /** The sluice headers did not parse: it is due and decided again. */
  malformed?: string[];
  /** sluice drain of the dead-letter topic: decided again as new, whatever its headers say. */
  decideAgain?: boolean;
}

const byteLength = (value: Buffer | string | null | undefined): number =>
  value === null || value === undefined ? 0 : Buffer.isBuffer(value) ? value.length : Buffer.byteLength(value);

/** Reads a fetched retry message; malformed sluice headers are repaired as far as possible and reported. */
export const readRetryItem = (
  topic: string,
  partition: number,
  message: KafkaMessage,
  identity: IdentityOptions,
  now: number,
): RetryItem => {
  const decoded = decodeParkHeaders(message.headers as IHeaders | undefined);
  const content: MessageContent = { key: message.key ?? null, value: message.value ?? null, headers: decoded.userHeaders };
  const base = { topic, partition, offset: message.offset, content, size: byteLength(message.key) + byteLength(message.value) };
  if (decoded.kind === 'valid') return { ...base, info: decoded.info };
  const fallback = {
    producer: identify({ key: content.key, headers: content.headers }, identity),
    timestamp: message.timestamp,
    origin: { topic, partition, offset: message.offset },
    now,
  };
  return { ...base, info: repairMalformed(decoded, fallback), malformed: decoded.problems };
};

/** Downstream: the user's key, value, headers and original timestamp, plus sluice-waited-ms and sluice-attempt. */
export const forwardMessage = (item: RetryItem, attempt: number, now: number): Message => ({
  key: item.content.key,
  value: item.content.value,
  headers: forwardHeaders(item.content.headers, now - item.info.firstSeen, attempt),
  timestamp: item.info.timestamp,
});

export const reparkMessage = (item: RetryItem, info: ParkInfo, partitions: number, now: number): Message =>
  parkMessage(item.content, info, partitions, now);

export const deadLetter = (item: RetryItem, info: ParkInfo, reason: DeadLetterReason, partitions: number, now: number): Message =>
  deadLetterMessage(item.content, info, reason, partitions, now);
