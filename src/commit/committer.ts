/**
 * The offset tracker: per partition, which ingress offsets may be committed — the contiguous
 * prefix of messages whose send (downstream or to a retry tier) was acknowledged. Completion is out of order;
 * offset gaps (transaction markers, compaction) are tolerated because the commit point is the
 * oldest unacknowledged offset, or one past the highest offset seen once all are acknowledged.
 *
 * The tracker also remembers the highest offset already scheduled per partition, so that after
 * a group rejoin (kafkajs fetches again from the committed offset) nothing is decided twice.
 *
 * The committer commits that prefix of every partition every ~200 ms (and on demand). A commit
 * refused because the group is rebalancing (REBALANCE_IN_PROGRESS, ILLEGAL_GENERATION,
 * UNKNOWN_MEMBER_ID) is not an error: kafkajs does not retry those, the next tick does.
 */
import type { Logger } from 'pino';
import { errorChain } from '../errors';
import { setRepeating, type Timer } from '../timers';

export interface PartitionOffsets {
  /** Marks one message as scheduled (held or parked); call the returned function once it is acknowledged. */
  track(offset: number): () => void;
  /** As `track`, without a function per message: `ack(offset)` once it is acknowledged (offsets in increasing order). */
  add(offset: number): void;
  /** The message at `offset`, added before, was acknowledged; a second ack of it changes nothing. */
  ack(offset: number): void;
  /** The whole fetched batch was handled: offsets up to lastOffset (gaps included) are covered. */
  covered(lastOffset: number): void;
  /** Whether this offset was already scheduled by this member (skip it after a rejoin). */
  scheduled(offset: number): boolean;
  /** The next offset to commit (string for kafkajs), or undefined when nothing new is committable. */
  commitPoint(): number | undefined;
  /** How many tracked messages are not acknowledged yet. */
  inFlight(): number;
}

export interface OffsetTracker {
  partition(topic: string, partition: number): PartitionOffsets;
  /** Commit points that moved since they were last marked committed. */
  pending(): { topic: string; partition: number; offset: number }[];
  markCommitted(topic: string, partition: number, offset: number): void;
  /** Nothing of this partition is left to acknowledge or to commit (every message taken acknowledged, their prefix committed). */
  settled(topic: string, partition: number): boolean;
  /** Forget partitions this member no longer owns (acks for them then go nowhere). */
  retain(assigned: { topic: string; partitions: number[] }[]): void;
  inFlight(): number;
}

export const createPartitionOffsets = (): PartitionOffsets & { committed: number } => {
  const queue: number[] = [];
  const acked = new Set<number>();
  let head = 0;
  let highest = -1;
  const state = {
    committed: -1,
    track(offset: number): () => void {
      state.add(offset);
      let done = false;
      return () => {
        if (done) return;
        done = true;
        acked.add(offset);
      };
    },
    add(offset: number): void {
      queue.push(offset);
      if (offset > highest) highest = offset;
    },
    ack(offset: number): void {
      if (head >= queue.length || offset < queue[head]) return; // acknowledged and counted already
      if (offset > queue[head]) {
        acked.add(offset);
        return;
      }
      // The oldest unacknowledged one (acks mostly come in order): the prefix moves now, no set.
      head += 1;
      while (acked.size > 0 && head < queue.length && acked.delete(queue[head])) head += 1;
    },
    covered(lastOffset: number): void {
      if (lastOffset > highest) highest = lastOffset;
    },
    scheduled: (offset: number): boolean => offset <= highest,
    commitPoint(): number | undefined {
      while (head < queue.length && acked.has(queue[head])) {
        acked.delete(queue[head]);
        head += 1;
      }
      if (head > 1024 && head * 2 > queue.length) {
        queue.splice(0, head);
        head = 0;
      }
      const point = head < queue.length ? queue[head] : highest + 1;
      return point > state.committed && point > 0 ? point : undefined;
    },
    inFlight: (): number => queue.length - head,
  };
  return state;
};

export const createOffsetTracker = (): OffsetTracker => {
  const partitions = new Map<string, { topic: string; partition: number; state: ReturnType<typeof createPartitionOffsets> }>();
  const keyOf = (topic: string, partition: number): string => `${topic}\u0000${partition}`;
  return {
    partition(topic, partition) {
      const key = keyOf(topic, partition);
      let entry = partitions.get(key);
      if (!entry) {
        entry = { topic, partition, state: createPartitionOffsets() };
        partitions.set(key, entry);
      }
      return entry.state;
    },
    pending() {
      const out: { topic: string; partition: number; offset: number }[] = [];
      for (const { topic, partition, state } of partitions.values()) {
        const offset = state.commitPoint();
        if (offset !== undefined) out.push({ topic, partition, offset });
      }
      return out;
    },
    markCommitted(topic, partition, offset) {
      const entry = partitions.get(keyOf(topic, partition));
      if (entry && offset > entry.state.committed) entry.state.committed = offset;
    },
    settled(topic, partition) {
      const entry = partitions.get(keyOf(topic, partition));
      return entry === undefined || (entry.state.commitPoint() === undefined && entry.state.inFlight() === 0);
    },
    retain(assigned) {
      const keep = new Set(assigned.flatMap(({ topic, partitions: ps }) => ps.map((p) => keyOf(topic, p))));
      for (const key of [...partitions.keys()]) if (!keep.has(key)) partitions.delete(key);
    },
    inFlight() {
      let n = 0;
      for (const { state } of partitions.values()) n += state.inFlight();
      return n;
    },
  };
};

export interface CommitTarget {
  commitOffsets(offsets: { topic: string; partition: number; offset: string }[]): Promise<void>;
}

export interface Committer {
  start(): void;
  /** Commits now what is committable; resolves when done (never throws for rebalance errors). */
  commitNow(): Promise<void>;
  /** Something was acknowledged: commit within a few ms (so a rebalance finds little acknowledged but uncommitted). */
  nudge(): void;
  stop(): void;
}

/**
 * After an acknowledgement, commit within this many ms. kafkajs rejoins a rebalancing group at
 * once (no revoke callback to commit in), so what was acknowledged but not yet committed when
 * a partition moves is sent again by its new owner: committing soon keeps that to the sends in
 * flight at that moment. At most one commit per flow per NUDGE_MS.
 */
export const NUDGE_MS = 20;

const rebalanceErrors = new Set(['REBALANCE_IN_PROGRESS', 'ILLEGAL_GENERATION', 'UNKNOWN_MEMBER_ID', 'NOT_COORDINATOR']);

/**
 * kafkajs throws a refused commit wrapped (its retrier's KafkaJSNonRetriableError around the
 * protocol error, which has the type): the cause chain is looked through.
 */
export const isRebalanceError = (error: unknown): boolean =>
  errorChain(error).some((e) => rebalanceErrors.has(String((e as { type?: unknown }).type)));

const staleErrors = new Set(['ILLEGAL_GENERATION', 'UNKNOWN_MEMBER_ID']);

/** A commit refused as of a past generation: the group went on without this member (it must join again). */
export const isStaleGeneration = (error: unknown): boolean =>
  errorChain(error).some((e) => staleErrors.has(String((e as { type?: unknown }).type)));

export const createCommitter = ({
  tracker,
  target,
  logger,
  intervalMs = 200,
}: {
  tracker: OffsetTracker;
  target: CommitTarget;
  logger: Logger;
  intervalMs?: number;
}): Committer => {
  let timer: Timer | undefined;
  let soon: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;

  const commitOnce = async (): Promise<void> => {
    const points = tracker.pending();
    if (points.length === 0) return;
    try {
      await target.commitOffsets(points.map(({ topic, partition, offset }) => ({ topic, partition, offset: String(offset) })));
      for (const { topic, partition, offset } of points) tracker.markCommitted(topic, partition, offset);
    } catch (error) {
      if (isRebalanceError(error)) logger.debug({ err: error }, 'commit refused during a rebalance; retrying next tick');
      else logger.warn({ err: error }, 'offset commit failed; retrying next tick');
    }
  };

  const commitNow = (): Promise<void> => {
    // One commit at a time; a caller arriving during one waits for it and then commits again.
    const next = (running ?? Promise.resolve()).then(commitOnce);
    const tracked: Promise<void> = next.finally(() => {
      if (running === tracked) running = undefined;
    });
    running = tracked;
    return next;
  };

  return {
    start() {
      if (timer) return;
      timer = setRepeating(() => {
        if (!running) void commitNow();
      }, intervalMs).unref();
    },
    commitNow,
    nudge() {
      if (soon || !timer) return;
      soon = setTimeout(() => {
        soon = undefined;
        void commitNow();
      }, NUDGE_MS);
      soon.unref();
    },
    stop() {
      timer?.clear();
      timer = undefined;
      if (soon) clearTimeout(soon);
      soon = undefined;
    },
  };
};
