/**
 * One kafkajs producer behind a queue: messages sent in the same tick leave in one
 * `sendBatch` (acks -1), one batch in flight at a time so order is kept. Urgent messages
 * (forwards: they leave on their slot) go first, each request filled up with the others
 * (parks, dead letters): a flood being parked never makes forwards late. Order is kept within
 * each kind, and a destination receives only one kind. Each message gets
 * its own promise: resolved once acknowledged, rejected only with MESSAGE_TOO_LARGE (the
 * broker refused that very message) or when the sender is closed with sends still failing.
 * Other failures are retried with back-off, never dropped: nothing acknowledged is lost and
 * nothing unacknowledged is committed. One request carries at most `maxBatchBytes`
 * (batch-split.ts), so a size refusal means one oversize message, sent alone, and nothing
 * the broker appended is sent twice.
 */
import type { Logger } from 'pino';
import type { Message, TopicMessages } from 'kafkajs';
import { SluiceError } from '../errors';
import { DEFAULT_MAX_BATCH_BYTES, groupByDestination, messageBytes, takeCount } from './batch-split';

export interface BatchProducer {
  sendBatch(batch: { topicMessages: TopicMessages[]; acks: number }): Promise<unknown>;
}

export interface Sender {
  /** Queues one message (`urgent`: ahead of the others); resolves when the broker acknowledged it (acks = all). */
  send(topic: string, message: Message, urgent?: boolean): Promise<void>;
  /** Resolves once everything queued so far has settled. */
  flush(): Promise<void>;
  /** Messages queued or in flight. */
  pending(): number;
  /** Stops retrying: sends still failing are rejected. */
  close(): void;
}

interface Pending {
  topic: string;
  message: Message;
  resolve(): void;
  reject(error: unknown): void;
}

interface Queue {
  items: Pending[];
  head: number;
}

const TOO_LARGE = new Set(['MESSAGE_TOO_LARGE', 'RECORD_LIST_TOO_LARGE']);

/** Whether a kafkajs error (or one it wraps) says the broker refused a message for its size. */
export const isTooLarge = (error: unknown): boolean => {
  for (let e = error as { type?: string; cause?: unknown; originalError?: unknown; errors?: unknown[] } | undefined, depth = 0; e && depth < 5; depth += 1) {
    if (e.type && TOO_LARGE.has(e.type)) return true;
    if (Array.isArray(e.errors) && e.errors.some(isTooLarge)) return true;
    e = (e.cause ?? e.originalError) as typeof e;
  }
  return false;
};

const groupByTopic = (batch: Pending[]): TopicMessages[] => {
  const byTopic = new Map<string, Message[]>();
  for (const { topic, message } of batch) {
    const list = byTopic.get(topic);
    if (list) list.push(message);
    else byTopic.set(topic, [message]);
  }
  return [...byTopic].map(([topic, messages]) => ({ topic, messages }));
};

export const createBatchSender = ({
  producer,
  logger,
  maxBatch = 2000,
  maxBatchBytes = DEFAULT_MAX_BATCH_BYTES,
  backoffMs = [100, 250, 500, 1000, 2000],
}: {
  producer: BatchProducer;
  logger: Logger;
  maxBatch?: number;
  /** Bytes one sendBatch may carry in all; keep it below every written topic's max.message.bytes. */
  maxBatchBytes?: number;
  backoffMs?: number[];
}): Sender => {
  const urgent: Queue = { items: [], head: 0 };
  const others: Queue = { items: [], head: 0 };
  let inFlight = 0;
  let pumping: Promise<void> | undefined;
  let closed = false;

  const sendOnce = async (batch: Pending[]): Promise<void> => {
    await producer.sendBatch({ topicMessages: groupByTopic(batch), acks: -1 });
    for (const p of batch) p.resolve();
  };

  const sendWithRetry = async (batch: Pending[]): Promise<void> => {
    for (let attempt = 0; ; attempt += 1) {
      try {
        return await sendOnce(batch);
      } catch (error) {
        if (isTooLarge(error)) return splitTooLarge(batch, error);
        if (closed) {
          for (const p of batch) p.reject(error);
          return;
        }
        const wait = backoffMs[Math.min(attempt, backoffMs.length - 1)];
        logger.warn({ err: error, messages: batch.length, retryInMs: wait }, 'send failed; retrying the same batch');
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
    }
  };

  // Reached with several messages only when a topic's max.message.bytes is below maxBatchBytes
  // (then a request spanning several partitions may have been appended in part, and a resend
  // can duplicate: warned). Split by destination first; one destination's batch in halves.
  const splitTooLarge = async (batch: Pending[], error: unknown): Promise<void> => {
    if (batch.length === 1) {
      const [p] = batch;
      p.reject(new SluiceError('MESSAGE_TOO_LARGE', `the broker refused a message for ${p.topic} as too large`, { cause: error }));
      return;
    }
    logger.warn({ err: error, messages: batch.length, maxBatchBytes }, 'a send of several messages was refused as too large: a topic\'s max.message.bytes is below maxBatchBytes; resending it split');
    const groups = groupByDestination(batch);
    if (groups.length > 1) {
      for (const group of groups) await sendWithRetry(group);
      return;
    }
    const half = Math.ceil(batch.length / 2);
    await sendWithRetry(batch.slice(0, half));
    await sendWithRetry(batch.slice(half));
  };

  const sizeOf = (p: Pending): number => messageBytes(p.message);

  // Taken from a head index, so a long queue is not copied once per request.
  const take = (q: Queue, maxCount: number, maxBytes: number, alone: boolean): Pending[] => {
    let n = takeCount(q.items, q.head, sizeOf, maxCount, maxBytes);
    if (n === 1 && !alone && sizeOf(q.items[q.head]) > maxBytes) n = 0; // too big to join: it goes alone next time
    if (n === 0) return [];
    const batch = q.head === 0 && n === q.items.length ? q.items : q.items.slice(q.head, q.head + n);
    q.head += n;
    if (q.head >= q.items.length) {
      q.items = [];
      q.head = 0;
    }
    return batch;
  };
  const waiting = (q: Queue): boolean => q.items.length > q.head;

  const takeBatch = (): Pending[] => {
    const first = take(urgent, maxBatch, maxBatchBytes, true);
    if (first.length === 0) return take(others, maxBatch, maxBatchBytes, true);
    const used = first.reduce((sum, p) => sum + sizeOf(p), 0);
    if (first.length >= maxBatch || used >= maxBatchBytes) return first;
    return first.concat(take(others, maxBatch - first.length, maxBatchBytes - used, false));
  };

  const pump = async (): Promise<void> => {
    while (waiting(urgent) || waiting(others)) await sendWithRetry(takeBatch());
    pumping = undefined;
  };

  const schedule = (): void => {
    if (pumping) return;
    pumping = new Promise<void>((resolve) => setImmediate(resolve)).then(pump);
  };

  return {
    send(topic, message, first = false) {
      inFlight += 1;
      const promise = new Promise<void>((resolve, reject) =>
        (first ? urgent : others).items.push({
          topic,
          message,
          resolve: () => {
            inFlight -= 1;
            resolve();
          },
          reject: (error) => {
            inFlight -= 1;
            reject(error);
          },
        }),
      );
      schedule();
      return promise;
    },
    async flush() {
      while (pumping) await pumping;
    },
    pending: () => inFlight,
    close() {
      closed = true;
    },
  };
};
