/**
 * Commits the acknowledged prefix of every partition every ~200 ms (and on demand). A commit
 * refused because the group is rebalancing (REBALANCE_IN_PROGRESS, ILLEGAL_GENERATION,
 * UNKNOWN_MEMBER_ID) is not an error: kafkajs does not retry those, the next tick does.
 */
import type { Logger } from 'pino';
import { setRepeating, type Timer } from '../timers';
import type { OffsetTracker } from './offset-tracker';

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

export const isRebalanceError = (error: unknown): boolean => {
  const type = (error as { type?: string } | undefined)?.type;
  return type !== undefined && rebalanceErrors.has(type);
};

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
