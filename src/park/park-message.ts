/**
 * The Kafka message that parks (or dead-letters) one message of a producer: the user's key,
 * value and headers kept, the sluice headers added, the current time as timestamp (so
 * retention counts from parking), and the partition picked from the producer id, so all
 * of one producer's parked messages share one partition per tier.
 */
import type { Message } from 'kafkajs';
import { asKafkaHeaders, type HeaderList } from '../headers/header-list';
import { SluiceError } from '../errors';
import { partitionForKey } from './murmur2';
import { DeadLetterReason, encodeParkHeaders, H, ParkInfo, withSluiceHeaders } from './park-headers';

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
