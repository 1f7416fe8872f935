/**
 * Builds and sends the three kinds of message sluice writes, through one Sender:
 * downstream (the user's key, value, headers and original timestamp, plus
 * `sluice-waited-ms`), a retry tier (park headers, on the producer's partition of the tier
 * chosen by the wait), the dead-letter topic (park headers plus the reason).
 * Every message names its partition: downstream, the one Kafka's default partitioner picks for
 * the key (murmur2), a message without a key round-robin. So the sender can keep each request
 * to one partition, and a resend never repeats what another partition appended.
 */
import type { Clock } from '../clock';
import { SluiceError } from '../errors';
import { chooseTier, DeadLetterReason, deadLetterMessage, forwardHeaders, H, MessageContent, parkMessage, ParkInfo, Tier, waitedText } from '../park/park';
import type { Message } from 'kafkajs';
import { asKafkaHeaders, type Header, type HeaderList, isSluiceName } from '../headers/header-list';
import { estimateBytes } from './batch-split';
import { partitionForKey } from '../park/murmur2';
import type { Sender } from './batch-sender';

export interface MessageWriter {
  /** Downstream (it leaves on its slot); resolves once acknowledged, with the broker's append time when the topic records it. */
  forward(content: MessageContent, options: { timestamp: string; waitedMs: number; attempt?: number }): Promise<number | undefined>;
  /** Several downstream at once, in order (first decisions: no attempt); one promise, with the error of each that failed at its index. */
  forwardAll(messages: readonly { content: MessageContent; timestamp: string; waitedMs: number; size: number }[]): Promise<unknown[]>;
  /** To a retry tier: `tier`, or the largest tier not longer than notBefore − now. Resolves with the tier used. */
  park(content: MessageContent, info: ParkInfo, tier?: Tier): Promise<Tier>;
  deadLetter(content: MessageContent, info: ParkInfo, reason: DeadLetterReason): Promise<number | undefined>;
}

export interface WriterTopics {
  downstream: string;
  deadLetter: string;
  tiers: readonly Tier[];
  /** Partition count of the downstream topic, of every tier topic and of the dead-letter topic (read at start). */
  partitions: ReadonlyMap<string, number>;
}

/**
 * The headers of a message released at once: the user's and `sluice-waited-ms`, in one pass
 * and one array. The user's list has no `sluice-*` header (dropped as the message was read,
 * src/flow/flow-item.ts); should one be there all the same, forwardHeaders drops it.
 */
export const withWaited = (user: HeaderList, waitedMs: number): HeaderList => {
  const out: Header[] = [];
  for (let i = 0; i < user.length; i += 1) {
    if (isSluiceName(user[i].key)) return forwardHeaders(user, waitedMs);
    out.push(user[i]);
  }
  out.push({ key: H.waitedMs, value: waitedText(waitedMs) });
  return out;
};

export const createMessageWriter = ({ sender, topics, clock }: { sender: Sender; topics: WriterTopics; clock: Clock }): MessageWriter => {
  const partitionsOf = (topic: string): number => {
    const n = topics.partitions.get(topic);
    if (n === undefined) throw new SluiceError('INTERNAL', `no partition count known for topic ${topic}`);
    return n;
  };
  const downstreamPartitions = partitionsOf(topics.downstream);
  let roundRobin = 0;
  const downstreamPartition = (key: MessageContent['key']): number => {
    if (key !== null && key !== undefined) return partitionForKey(key, downstreamPartitions);
    roundRobin = (roundRobin + 1) % downstreamPartitions;
    return roundRobin;
  };

  const downstream = (content: MessageContent, timestamp: string, headers: HeaderList): Message =>
    ({ key: content.key, value: content.value, headers: asKafkaHeaders(headers), timestamp, partition: downstreamPartition(content.key) });

  return {
    forward(content, { timestamp, waitedMs, attempt }) {
      return sender.send(topics.downstream, downstream(content, timestamp, forwardHeaders(content.headers, waitedMs, attempt)));
    },
    forwardAll(messages) {
      const bytes: number[] = [];
      const built = messages.map(({ content, timestamp, waitedMs, size }): Message => {
        const headers = withWaited(content.headers, waitedMs);
        // Every header is the user's (their bytes are in `size`) but sluice-waited-ms.
        bytes.push(estimateBytes(size + H.waitedMs.length + waitedText(waitedMs).length, headers.length));
        return downstream(content, timestamp, headers);
      });
      return sender.sendAll(topics.downstream, built, bytes);
    },
    async park(content, info, tier) {
      const now = clock.now();
      const chosen = tier ?? chooseTier(topics.tiers, info.notBefore - now);
      await sender.send(chosen.topic, parkMessage(content, info, partitionsOf(chosen.topic), now));
      return chosen;
    },
    deadLetter(content, info, reason) {
      const now = clock.now();
      return sender.send(topics.deadLetter, deadLetterMessage(content, info, reason, partitionsOf(topics.deadLetter), now));
    },
  };
};
