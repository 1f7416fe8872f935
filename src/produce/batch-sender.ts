/**
 * What sluice writes, and how it reaches the broker.
 *
 * **The writer** (createMessageWriter) builds the three kinds of message sluice writes:
 * downstream (the user's key, value, headers and original timestamp, plus
 * `sluice-waited-ms`), a retry tier (park headers, on the producer's partition of the tier
 * chosen by the wait), the dead-letter topic (park headers plus the reason). Every message
 * names its partition: downstream, the one Kafka's default partitioner picks for the key
 * (murmur2), a message without a key round-robin. So the sender can keep each request to one
 * partition, and a resend never repeats what another partition appended.
 *
 * **The sender** (createBatchSender): one kafkajs producer behind a queue per destination
 * partition: messages for one partition
 * queued in the same run (and the continuations already queued with it) leave in one
 * `sendBatch` (acks -1), one request in flight per partition so order is kept. A request
 * carries one partition because Kafka answers per partition while kafkajs throws for the whole
 * request: a request spanning partitions that one of them refused (its leader moving, a topic
 * just created) had the others appended, and its resend duplicated them. (A message without a
 * partition is queued per topic and placed by kafkajs; the writer names every
 * partition.) A topic that cannot be written (deleted, denied, refusing a record) holds back
 * only the messages that go to it: the others keep flowing, and only the source partitions of
 * the stuck messages wait for their commit (docs/contract.md "HTTP"). Each message gets its own promise:
 * resolved once acknowledged, rejected only with MESSAGE_TOO_LARGE (the broker refused that
 * very message) or when the sender is closed with sends still failing. Other failures are
 * retried with back-off, never dropped: nothing acknowledged is lost and nothing
 * unacknowledged is committed; each is counted (`onError`) and the topic is reported failing
 * (`failing()`) until its sends succeed again. One request carries at most `maxBatchBytes`
 * (batch-split.ts), so a size refusal means one oversize message, sent alone.
 */
import type { Logger } from 'pino';
import type { Message } from 'kafkajs';
import type { Clock } from '../clock';
import { brokerErrorType, errorChain, SluiceError } from '../errors';
import { asKafkaHeaders, type Header, type HeaderList, isSluiceName } from '../headers/header-list';
import { partitionForKey } from '../park/murmur2';
import { chooseTier, type DeadLetterReason, deadLetterMessage, forwardHeaders, type MessageContent, parkMessage, type ParkInfo, type Tier, waitedHeader } from '../park/park';
import { DEFAULT_MAX_BATCH_BYTES, estimateBytes, messageBytes, takeCount } from './batch-split';
import { createSlowBroker, type SlowBroker } from './slow-broker';

// ---- The writer ----

export interface MessageWriter {
  /** Downstream (it leaves on its slot); resolves once acknowledged, with the broker's answer. */
  forward(content: MessageContent, options: { timestamp: string; waitedMs: number; attempt?: number }): Promise<SendAnswer>;
  /** Several downstream at once, in order (first decisions: no attempt), each having waited since its `firstSeen` until `now`; one promise (Sender.sendAll). */
  forwardAll(items: readonly ReleasedAtOnce[], now: number): Promise<SentAll>;
  /** To a retry tier: `tier`, or the largest tier not longer than notBefore − now. Resolves with the tier used. */
  park(content: MessageContent, info: ParkInfo, tier?: Tier): Promise<Tier>;
  deadLetter(content: MessageContent, info: ParkInfo, reason: DeadLetterReason): Promise<SendAnswer>;
}

/** A message released at once, as the flow carries it (no object made for the writer a message). */
export interface ReleasedAtOnce {
  content: MessageContent;
  /** key + value + header bytes. */
  size: number;
  info: { timestamp: string; firstSeen: number };
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
  // Made at its length: an array grown by push from [] holds room for 16 more (~100 bytes a message).
  const out = new Array<Header>(user.length + 1);
  for (let i = 0; i < user.length; i += 1) {
    if (isSluiceName(user[i].key)) return forwardHeaders(user, waitedMs);
    out[i] = user[i];
  }
  out[user.length] = waitedHeader(waitedMs);
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
    forwardAll(items, now) {
      const bytes = new Array<number>(items.length);
      const built = new Array<Message>(items.length);
      for (let i = 0; i < items.length; i += 1) {
        const { content, size, info } = items[i];
        const headers = withWaited(content.headers, now - info.firstSeen);
        // Every header is the user's (their bytes are in `size`) but sluice-waited-ms, the last.
        const waited = headers[headers.length - 1];
        bytes[i] = estimateBytes(size + waited.key.length + (waited.value?.length ?? 0), headers.length);
        built[i] = downstream(content, info.timestamp, headers);
      }
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

// ---- The sender ----

export interface BatchProducer {
  sendBatch(batch: { topicMessages: { topic: string; messages: Message[] }[]; acks: number }): Promise<unknown>;
}

/** A destination whose sends fail: since when (epoch ms), how often, and the last error. */
export interface SendTrouble {
  destination: string;
  since: number;
  failures: number;
  code: string;
  error: string;
}

/** The broker's answer to a request, the same object for every message it carried. */
export interface SendAnswer {
  /** The broker's append time when the topic records it (`message.timestamp.type=LogAppendTime`), else undefined. */
  appendedAt: number | undefined;
  /** Whether the partition's broker is slow (for good or by turns) as it answered (./slow-broker.ts). */
  slow: boolean;
}

/** How the messages of one `sendAll` ended. */
export interface SentAll {
  /** The error of each that failed, at its index (empty when all were acknowledged). */
  errors: unknown[];
  /** Whether any of them was answered by a partition's broker slow (./slow-broker.ts). */
  slow: boolean;
}

export interface Sender {
  /** Queues one message; resolves when the broker acknowledged it (acks = all), with its answer. */
  send(topic: string, message: Message): Promise<SendAnswer>;
  /**
   * Queues several messages in order (each to its own partition, as `send` would); ONE promise
   * for them all, resolved once every one settled. Same failures as `send`. `bytes`: each
   * message's size as messageBytes would estimate it, when the caller knows it (else it is measured).
   */
  sendAll(topic: string, messages: readonly Message[], bytes?: readonly number[]): Promise<SentAll>;
  /** Resolves once everything queued so far has settled. */
  flush(): Promise<void>;
  /** Messages queued or in flight. */
  pending(): number;
  /** Destinations whose last send failed (retried until one succeeds). */
  failing(): SendTrouble[];
  /** Stops retrying: sends still failing are rejected. */
  close(): void;
}

/** How queued messages report their end: one per `send`, one for all the messages of a `sendAll`. */
interface Settle {
  ok(index: number, answer: SendAnswer): void;
  fail(index: number, error: unknown): void;
}

interface Pending {
  topic: string;
  message: Message;
  settle: Settle;
  /** Its place among the messages of its `sendAll` (0 for `send`). */
  index: number;
  /** messageBytes of it. */
  bytes: number;
}

/** One partition of a topic (or a whole topic, for messages without a partition). */
interface Destination {
  topic: string;
  partition?: number;
  items: Pending[];
  /** Items before it are taken (a long queue is not copied once per request). */
  head: number;
  pumping?: Promise<void>;
  trouble?: SendTrouble;
  /** How its requests took (none: `slowBounds` not given, never slow). */
  broker?: SlowBroker;
  /** Whether the last answer found it slow (logged when that changes). */
  saidSlow?: boolean;
}

type ErrorLike = { type?: string; cause?: unknown; originalError?: unknown; errors?: unknown[] } | undefined;

const TOO_LARGE = new Set(['MESSAGE_TOO_LARGE', 'RECORD_LIST_TOO_LARGE']);

/** Whether a kafkajs error (or one it wraps) says the broker refused a message for its size. */
export const isTooLarge = (error: unknown): boolean => {
  for (let e = error as ErrorLike, depth = 0; e && depth < 5; depth += 1) {
    if (e.type && TOO_LARGE.has(e.type)) return true;
    if (Array.isArray(e.errors) && e.errors.some(isTooLarge)) return true;
    e = (e.cause ?? e.originalError) as ErrorLike;
  }
  return false;
};

/**
 * A short, bounded label for a failed send: the broker's error code when kafkajs carries one
 * (`UNKNOWN_TOPIC_OR_PARTITION`, `TOPIC_AUTHORIZATION_FAILED`, …), else the innermost error's name.
 */
export const sendErrorCode = (error: unknown): string => brokerErrorType(error) ?? errorChain(error).at(-1)?.name ?? 'Error';

/**
 * The broker's append time of a request's one partition, from kafkajs's answer to `sendBatch`
 * (its `logAppendTime`, "-1" unless the topic records LogAppendTime): undefined when none.
 */
export const appendTimeOf = (answer: unknown): number | undefined => {
  const first = Array.isArray(answer) ? (answer[0] as { logAppendTime?: unknown } | undefined) : undefined;
  const at = Number(first?.logAppendTime);
  return at > 0 ? at : undefined;
};

export const createBatchSender = ({
  producer,
  logger,
  maxBatch = 2000,
  maxBatchBytes = DEFAULT_MAX_BATCH_BYTES,
  backoffMs = [100, 250, 500, 1000, 2000],
  onError,
  slowBounds,
  now = Date.now,
}: {
  producer: BatchProducer;
  logger: Logger;
  maxBatch?: number;
  /** Bytes one sendBatch may carry in all; keep it below every written topic's max.message.bytes. */
  maxBatchBytes?: number;
  backoffMs?: number[];
  /** One failed send (retried) to `destination`, with its sendErrorCode. */
  onError?(destination: string, code: string): void;
  /**
   * A partition is slow when its requests of the last ten seconds took longer than
   * `afterMs` by more, together, than twice `afterMs` of each second, those longer than `outageMs`
   * left out (./slow-broker.ts). None: never slow.
   */
  slowBounds?: { afterMs: number; outageMs: number };
  now?(): number;
}): Sender => {
  const destinations: Destination[] = [];
  let inFlight = 0;
  let closed = false;

  const sendOnce = async (d: Destination, batch: Pending[]): Promise<void> => {
    const written = now();
    const answer = await producer.sendBatch({ topicMessages: [{ topic: d.topic, messages: batch.map((p) => p.message) }], acks: -1 });
    const answered = now();
    d.broker?.request(answered - written, answered);
    const sent: SendAnswer = { appendedAt: appendTimeOf(answer), slow: d.broker?.slow(answered) ?? false };
    if (sent.slow !== (d.saidSlow ?? false)) {
      d.saidSlow = sent.slow;
      if (sent.slow) logger.warn({ destination: d.topic, partition: d.partition, slowAfterMs: slowBounds?.afterMs }, 'the partition\'s broker is slow (its requests of the last 10 s took longer than slowAfterMs by more than twice slowAfterMs of each second): its sends count at their releases, and the broker appends what waited for a request together with it, on top of the second\'s bound');
      else logger.info({ destination: d.topic, partition: d.partition }, 'the partition\'s broker answers quickly again: its sends count at the broker');
    }
    inFlight -= batch.length;
    for (const p of batch) p.settle.ok(p.index, sent);
  };

  const sendWithRetry = async (d: Destination, batch: Pending[]): Promise<void> => {
    for (let attempt = 0; ; attempt += 1) {
      try {
        await sendOnce(d, batch);
        if (d.trouble) logger.info({ destination: d.topic, partition: d.partition, failures: d.trouble.failures, failingMs: now() - d.trouble.since }, 'sends to the topic succeed again');
        d.trouble = undefined;
        return;
      } catch (error) {
        if (isTooLarge(error)) return splitTooLarge(d, batch, error);
        const code = sendErrorCode(error);
        d.trouble = { destination: d.topic, since: d.trouble?.since ?? now(), failures: (d.trouble?.failures ?? 0) + 1, code, error: (error as Error)?.message ?? String(error) };
        onError?.(d.topic, code);
        if (closed) {
          inFlight -= batch.length;
          for (const p of batch) p.settle.fail(p.index, error);
          return;
        }
        const wait = backoffMs[Math.min(attempt, backoffMs.length - 1)];
        logger.warn({ err: error, destination: d.topic, partition: d.partition, code, messages: batch.length, retryInMs: wait }, 'send failed; retrying the same batch (only this partition waits)');
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
    }
  };

  // Reached with several messages only when the topic's max.message.bytes is below
  // maxBatchBytes: the batch (one partition's, refused whole) is resent in halves.
  const splitTooLarge = async (d: Destination, batch: Pending[], error: unknown): Promise<void> => {
    if (batch.length === 1) {
      const [p] = batch;
      inFlight -= 1;
      p.settle.fail(p.index, new SluiceError('MESSAGE_TOO_LARGE', `the broker refused a message for ${p.topic} as too large`, { cause: error }));
      return;
    }
    logger.warn({ err: error, destination: d.topic, partition: d.partition, messages: batch.length, maxBatchBytes }, 'a send of several messages was refused as too large: the topic\'s max.message.bytes is below maxBatchBytes; resending it in halves');
    const half = Math.ceil(batch.length / 2);
    await sendWithRetry(d, batch.slice(0, half));
    await sendWithRetry(d, batch.slice(half));
  };

  const sizeOf = (p: Pending): number => p.bytes;

  const take = (d: Destination): Pending[] => {
    const n = takeCount(d.items, d.head, sizeOf, maxBatch, maxBatchBytes);
    const batch = d.head === 0 && n === d.items.length ? d.items : d.items.slice(d.head, d.head + n);
    d.head += n;
    if (d.head >= d.items.length) {
      d.items = [];
      d.head = 0;
    }
    return batch;
  };

  const pump = async (d: Destination): Promise<void> => {
    while (d.items.length > d.head) await sendWithRetry(d, take(d));
    d.pumping = undefined;
  };

  // By topic, then partition (-1: a message without one): no key string built per message.
  const byTopic = new Map<string, Map<number, Destination>>();
  const destinationOf = (topic: string, partition: number | undefined): Destination => {
    let partitions = byTopic.get(topic);
    if (!partitions) byTopic.set(topic, (partitions = new Map()));
    let d = partitions.get(partition ?? -1);
    if (!d) {
      d = { topic, partition, items: [], head: 0, broker: slowBounds && createSlowBroker(slowBounds.afterMs, slowBounds.outageMs) };
      partitions.set(partition ?? -1, d);
      destinations.push(d);
    }
    return d;
  };

  /** One trouble per topic: since its first failing partition failed, failures summed, the error of the one failing most. */
  const failingTopics = (): SendTrouble[] => {
    const byTopic = new Map<string, SendTrouble>();
    for (const { trouble } of destinations) {
      if (!trouble) continue;
      const seen = byTopic.get(trouble.destination);
      if (!seen) byTopic.set(trouble.destination, { ...trouble });
      else {
        const worst = trouble.failures > seen.failures ? trouble : seen;
        byTopic.set(trouble.destination, { ...worst, since: Math.min(seen.since, trouble.since), failures: seen.failures + trouble.failures });
      }
    }
    return [...byTopic.values()];
  };

  const queue = (p: Pending): void => {
    inFlight += 1;
    const d = destinationOf(p.topic, p.message.partition ?? undefined);
    d.items.push(p);
    // The pump starts once the code that queued this (and the continuations already queued
    // with it: every partition's batch of one fetch, every release of one timer) has run, not
    // in the next check phase: that wait cost 2 ms per forward at 5,000 msg/s (README, Performance).
    d.pumping ??= Promise.resolve().then(() => pump(d));
  };

  return {
    send(topic, message) {
      return new Promise<SendAnswer>((resolve, reject) =>
        queue({ topic, message, index: 0, bytes: messageBytes(message), settle: { ok: (_, answer) => resolve(answer), fail: (_, error) => reject(error) } }));
    },
    sendAll(topic, messages, bytes) {
      if (messages.length === 0) return Promise.resolve({ errors: [], slow: false });
      return new Promise<SentAll>((resolve) => {
        const all: SentAll = { errors: [], slow: false };
        let left = messages.length;
        const settle: Settle = {
          ok: (_, answer) => {
            all.slow ||= answer.slow;
            if (--left === 0) resolve(all);
          },
          fail: (index, error) => {
            all.errors[index] = error;
            if (--left === 0) resolve(all);
          },
        };
        for (let index = 0; index < messages.length; index += 1) {
          const message = messages[index];
          queue({ topic, message, index, bytes: bytes?.[index] ?? messageBytes(message), settle });
        }
      });
    },
    async flush() {
      for (;;) {
        const pumping = destinations.flatMap((d) => (d.pumping ? [d.pumping] : []));
        if (pumping.length === 0) return;
        await Promise.all(pumping);
      }
    },
    pending: () => inFlight,
    failing: failingTopics,
    close() {
      closed = true;
    },
  };
};
