/**
 * Pure helpers for what one `sendBatch` may carry: the broker refuses a partition's record
 * batch above the topic's `max.message.bytes`, so a request never carries more than
 * `maxBatchBytes` in all, and a message bigger than that travels alone.
 */
import type { Message } from 'kafkajs';
import { headerBytes, headerListOf, type HeaderList } from '../headers/header-list';

/**
 * 512 KiB: half the broker's default `message.max.bytes` (1 MiB, also the floor sluice's topic
 * check expects of tier topics), leaving room for record-batch overhead and for topics whose
 * limit was lowered somewhat; small enough that a request still carries hundreds of 1 KiB
 * messages.
 */
export const DEFAULT_MAX_BATCH_BYTES = 512 * 1024;

/** Bytes per record beyond key, value and headers (attributes, varints, timestamp, offset delta). */
const RECORD_OVERHEAD_BYTES = 32;

const bytesOf = (value: Message['value'] | string | undefined): number => {
  if (value === null || value === undefined) return 0;
  return typeof value === 'string' ? Buffer.byteLength(value) : value.length;
};

/** An upper estimate of the bytes a message adds to a record batch (uncompressed). */
export const messageBytes = (message: Message): number => {
  // A list as sluice writes it (src/headers/header-list.ts), or kafkajs's object.
  const headers: HeaderList = Array.isArray(message.headers) ? message.headers : headerListOf({ headers: message.headers });
  return estimateBytes(bytesOf(message.key) + bytesOf(message.value) + headerBytes(headers), headers.length);
};

/**
 * The same upper estimate as messageBytes for a message whose key + value + header names and
 * values are known to come to `contentBytes`, with `headerValues` header values (no byte
 * lengths measured again).
 */
export const estimateBytes = (contentBytes: number, headerValues: number): number => RECORD_OVERHEAD_BYTES + contentBytes + 8 * headerValues;

/**
 * How many items from `start` form the next request: at most `maxCount`, at most `maxBytes`
 * in all — except that an item bigger than `maxBytes` is taken alone.
 */
export const takeCount = <T>(items: readonly T[], start: number, sizeOf: (item: T) => number, maxCount: number, maxBytes: number): number => {
  let bytes = 0;
  let n = 0;
  for (; start + n < items.length && n < maxCount; n += 1) {
    bytes += sizeOf(items[start + n]);
    if (bytes > maxBytes) return n === 0 ? 1 : n;
  }
  return n;
};
