/**
 * Pauses partitions until an instant (a tier's head whose turn has not come, or the store down
 * under limiter.onStoreError = park) and resumes them then; pauses everything while blocked
 * (the hold is full, or the process is stopping); keeps a partition stopped on a message that
 * cannot be written paused for good. kafkajs keeps pause state per topic
 * across rebalances, so after every group join all timers are dropped and every assigned
 * partition resumed: the next fetch re-derives what must stay paused from what is due.
 *
 * The gate in front of a tier (pure): when a tier message may be taken. Its turn comes when
 * its tier delay is over or when its not-before is within the read-ahead (hold.maxMs), so a
 * `delayed` message is in memory before its slot and leaves on it. A partition is read in
 * order and paused until its head's turn. A head never holds its partition longer than its tier
 * delay plus FUTURE_TOLERANCE_MS from now: a record with a timestamp in the future (written by
 * someone else, or a broker clock ahead of the store's) waits no longer than a fresh park would.
 *
 * A partition paused until its head's turn is read again then, and that read takes, with the
 * head, every message whose not-before is within the read-ahead plus READ_BATCH_MS: a partition
 * whose messages fall due one slot apart is read once per READ_BATCH_MS of slots, not once per
 * slot (each read fetches up to a partition's fetch size, and what it does not take is fetched
 * again by the next one).
 */
import type { Consumer } from 'kafkajs';
import type { Clock } from '../clock';
import type { Tier } from '../park/park';
import { setTimer, type Timer } from '../timers';
import { HOP_MARGIN_MS } from './flow-item';

export interface GateInput {
  tier: Tier;
  /** The record's Kafka timestamp (when it was parked). */
  parkedAt: number;
  /** Its not-before, when its headers carry one. */
  notBefore?: number;
}

/** How far ahead of the flow's clock a tier record's timestamp may be and still count in full. */
export const FUTURE_TOLERANCE_MS = 1000;

/**
 * How much earlier than its turn a message is taken by a read that takes its partition's head:
 * the hop margin, so a message taken this early is held in memory, not hopped to another tier.
 */
export const READ_BATCH_MS = HOP_MARGIN_MS;

/** The instant the message may be taken. */
export const turnOf = ({ tier, parkedAt, notBefore }: GateInput, now: number, readAheadMs: number): number => {
  const tierOver = Math.min(parkedAt, now + FUTURE_TOLERANCE_MS) + tier.delayMs;
  return notBefore === undefined ? tierOver : Math.min(tierOver, notBefore - readAheadMs);
};

/**
 * When a read at `now` must leave the message for later: undefined when it is taken now (its
 * not-before within the read-ahead plus READ_BATCH_MS, or its tier delay over), else its turn,
 * when its partition is read again.
 */
export const readLater = (input: GateInput, now: number, readAheadMs: number): number | undefined =>
  turnOf(input, now, readAheadMs + READ_BATCH_MS) <= now ? undefined : turnOf(input, now, readAheadMs);

/** kafkajs's error for pause/resume while it has no consumer group (before run, between a crash and its restart). */
const NOT_RUNNING = /consumer group was not initialized/i;

export type Assignment = { topic: string; partitions: number[] }[];

export interface PartitionPauser {
  pauseUntil(topic: string, partition: number, until: number): void;
  /** Pauses every assigned partition until `false` (memory pressure, shutdown). */
  setBlocked(blocked: boolean): void;
  /** Stops one partition for good (a message there cannot be written anywhere). */
  stop(topic: string, partition: number): void;
  isStopped(topic: string, partition: number): boolean;
  /** After a group join: forget every pause, resume what is assigned (unless blocked). */
  onAssignment(assigned: Assignment): void;
  /** Partitions paused until an instant: "topic/partition" → instant. */
  paused(): Map<string, number>;
  close(): void;
}

export const createPartitionPauser = ({ consumer, clock }: { consumer: Pick<Consumer, 'pause' | 'resume'>; clock: Clock }): PartitionPauser => {
  const timers = new Map<string, { until: number; timer: Timer }>();
  let closed = false;
  // kafkajs throws when pause/resume are called on a consumer that is not running: after close()
  // (the graceful stop) they do nothing, so a late timer or hand-off cannot end the process; and
  // between a crash and kafkajs's restart of the consumer (it has no consumer group then) they are
  // skipped: the restart joins again, and onAssignment applies `blocked` and the stops anew.
  const quietly = (call: () => void): void => {
    if (closed) return;
    try {
      call();
    } catch (error) {
      if (!NOT_RUNNING.test((error as Error).message)) throw error;
    }
  };
  const pause = (what: { topic: string; partitions?: number[] }[]): void => quietly(() => consumer.pause(what));
  const resumeNow = (what: { topic: string; partitions?: number[] }[]): void => quietly(() => consumer.resume(what));
  const stopped = new Set<string>();
  let assigned: Assignment = [];
  let blocked = false;
  const keyOf = (topic: string, partition: number): string => `${topic}/${partition}`;

  const resume = (topic: string, partition: number): void => {
    timers.delete(keyOf(topic, partition));
    if (!blocked && !stopped.has(keyOf(topic, partition))) resumeNow([{ topic, partitions: [partition] }]);
  };
  const pauseStopped = (): void => {
    for (const key of stopped) {
      const at = key.lastIndexOf('/');
      pause([{ topic: key.slice(0, at), partitions: [Number(key.slice(at + 1))] }]);
    }
  };

  const clearTimers = (): void => {
    for (const { timer } of timers.values()) timer.clear();
    timers.clear();
  };

  return {
    pauseUntil(topic, partition, until) {
      if (closed) return;
      const key = keyOf(topic, partition);
      const existing = timers.get(key);
      existing?.timer.clear();
      pause([{ topic, partitions: [partition] }]);
      const timer = setTimer(() => resume(topic, partition), until - clock.now());
      timers.set(key, { until, timer });
    },
    setBlocked(value) {
      if (value === blocked) return;
      blocked = value;
      if (blocked) {
        if (assigned.length) pause(assigned);
        return;
      }
      for (const { topic, partitions } of assigned) {
        const free = partitions.filter((p) => !timers.has(keyOf(topic, p)) && !stopped.has(keyOf(topic, p)));
        if (free.length) resumeNow([{ topic, partitions: free }]);
      }
    },
    stop(topic, partition) {
      stopped.add(keyOf(topic, partition));
      pause([{ topic, partitions: [partition] }]);
    },
    isStopped: (topic, partition) => stopped.has(keyOf(topic, partition)),
    onAssignment(next) {
      clearTimers();
      assigned = next;
      if (!blocked && assigned.length) resumeNow(assigned);
      if (blocked && assigned.length) pause(assigned);
      pauseStopped();
    },
    paused: () => new Map([...timers].map(([key, { until }]) => [key, until])),
    close() {
      closed = true;
      clearTimers();
    },
  };
};
