/**
 * One ingress message as the pipeline carries it: the user's content with inbound `sluice-*`
 * headers dropped, who sent it, when sluice first saw it and where it came from.
 */
import type { KafkaMessage } from 'kafkajs';
import type { MessageContent } from '../park/park-message';
import { stripSluiceHeaders } from '../park/park-headers';
import { identify, IdentityOptions } from '../identify/identify';

export interface Inbound {
  content: MessageContent;
  producer: string;
  /** The original Kafka timestamp (epoch ms as a string). */
  timestamp: string;
  firstSeen: number;
  topic: string;
  partition: number;
  offset: string;
  /** key + value bytes: what the byte bucket and the hold cap count. */
  size: number;
  /** Inbound `sluice-*` header values dropped. */
  forged: number;
}

const byteLength = (b: Buffer | string | null): number => (b === null ? 0 : Buffer.isBuffer(b) ? b.length : Buffer.byteLength(b));

export const toInbound = (
  message: KafkaMessage,
  where: { topic: string; partition: number },
  identity: IdentityOptions,
  now: number,
): Inbound => {
  const { headers, dropped } = stripSluiceHeaders(message.headers);
  const content: MessageContent = { key: message.key, value: message.value, headers };
  return {
    content,
    producer: identify({ key: message.key, headers }, identity),
    timestamp: message.timestamp,
    firstSeen: now,
    topic: where.topic,
    partition: where.partition,
    offset: message.offset,
    size: byteLength(message.key) + byteLength(message.value),
    forged: dropped,
  };
};
