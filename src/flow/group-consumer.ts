/**
 * The one consumer wrapper: a kafkajs consumer in a group with manual offsets (autoCommit and
 * eachBatchAutoResolve off), fromBeginning for a new group, a short maxWaitTimeInMs so a
 * resume takes effect within ~100 ms, the acknowledged prefix committed every
 * commit.intervalMs (and within a few ms of an acknowledgement). kafkajs has no revoke
 * callback and rejoins at once, so a rebalance is read from its events:
 *   REBALANCING → `onRebalancing(owned)`: the flow stops forwarding; what was written is
 *                 committed;
 *   GROUP_JOIN  → `onJoin(lost)`: the flow parks what is still held for partitions lost; that
 *                 is committed (the classic group protocol takes a commit of this member's
 *                 generation for any partition) before they are forgotten. Partitions gained
 *                 wait `handoffMs` and start from the offset committed then, so the previous
 *                 owner's last commit is seen: nothing is sent by both. Pause state is re-derived.
 * A CRASH with restart false means the consumer is gone for good (/healthz says so). So is one
 * that has not heard from its group for long (no heartbeat, fetch or join: kafkajs can be left
 * out of its group after a broker stall without a crash): `silentMs()` says for how long.
 */
import type { Admin, Consumer, ConsumerConfig, EachBatchPayload, Kafka } from 'kafkajs';
import type { Logger } from 'pino';
import type { Clock } from '../clock';
import { createCommitter } from '../commit/committer';
import type { OffsetTracker } from '../commit/offset-tracker';
import type { Metrics } from '../metrics/types';
import { setTimer } from '../timers';
import { ownerOf } from './flow-item';
import { type Assignment, createPartitionPauser, type PartitionPauser } from './partition-pauser';

/**
 * The handler never blocks, so a short session lets a dead replica's partitions move on within
 * ~10 s. While every partition it has is paused (a hand-off, the hold full) kafkajs sends no
 * fetch and sleeps maxWaitTimeInMs: a resume takes effect after up to that long (at 200 ms
 * that cost a fresh replica its first ~0.2 s of reading; strict spacing never wins it back).
 */
export const CONSUMER_SETTINGS = { maxWaitTimeInMs: 100, sessionTimeout: 10_000, rebalanceTimeout: 10_000, heartbeatInterval: 1_000 } as const;

export interface GroupConsumerOptions {
  kafka: Kafka;
  groupId: string;
  topics: readonly string[];
  tracker: OffsetTracker;
  commitIntervalMs: number;
  partitionsConsumedConcurrently: number;
  clock: Clock;
  metrics: Metrics;
  logger: Logger;
  config?: Partial<ConsumerConfig>;
  onRebalancing(owned: (owner: string) => boolean): Promise<void>;
  onJoin(lost: (owner: string) => boolean): Promise<void>;
  /** How long a partition gained in a rebalance waits before it is read (0: not at all). */
  handoffMs?: number;
}

export interface GroupConsumer {
  pauser: PartitionPauser;
  start(eachBatch: (payload: EachBatchPayload) => Promise<void>): Promise<void>;
  /** Joined its group, and reads the partitions of its first assignment (their hand-off is over): /readyz. */
  joined(): boolean;
  crashed(): boolean;
  /** How long since the last heartbeat, fetch or join (0 before the start, while stopping and after a crash). */
  silentMs(): number;
  assignment(): Assignment;
  commitNow(): Promise<void>;
  /** Something was acknowledged: commit soon. */
  nudge(): void;
  /** Commits, leaves the group and disconnects, each step bounded by `deadline` (epoch ms of the pod clock). */
  stop(deadline: number): Promise<void>;
}

const within = <T>(work: Promise<T>, deadline: number): Promise<T | undefined> =>
  Promise.race([work, new Promise<undefined>((resolve) => void setTimer(() => resolve(undefined), deadline - Date.now()).unref())]);

export const createGroupConsumer = (options: GroupConsumerOptions): GroupConsumer => {
  const { tracker, logger, groupId } = options;
  const consumer: Consumer = options.kafka.consumer({ groupId, allowAutoTopicCreation: false, ...CONSUMER_SETTINGS, ...options.config });
  const pauser = createPartitionPauser({ consumer, clock: options.clock });
  const committer = createCommitter({ tracker, target: consumer, logger, intervalMs: options.commitIntervalMs });
  let joined = false;
  let crashed = false;
  /** Pod-clock ms of the last sign of the group (heartbeat, fetch, join); undefined until started. */
  let heardAt: number | undefined;
  const heard = (): void => {
    heardAt = Date.now();
  };
  consumer.on(consumer.events.HEARTBEAT, heard);
  consumer.on(consumer.events.FETCH, heard);
  let assigned: Assignment = [];

  const owners = (list: Assignment): string[] => list.flatMap(({ topic, partitions }) => partitions.map((p) => ownerOf(topic, p)));
  let admin: Promise<Admin> | undefined;
  let stopping = false;
  const trouble = (what: string) => (error: unknown): void => logger.warn({ err: error }, `${what} failed`);

  /** The hand-off's admin client, connected at the start so that a join's first look at the commits takes milliseconds. */
  const adminClient = (): Promise<Admin> => {
    admin ??= (async () => {
      const created = options.kafka.admin();
      await created.connect();
      return created;
    })().catch((error: unknown) => {
      admin = undefined; // the next hand-off tries again
      throw error;
    });
    return admin;
  };

  const committedOf = async (topic: string): Promise<Map<number, string>> => {
    const [committed] = await (await adminClient()).fetchOffsets({ groupId, topics: [topic] });
    return new Map((committed?.partitions ?? []).map(({ partition, offset }) => [partition, offset]));
  };

  /** Whether this consumer is its group's only member (then no other can still commit what it sent). */
  const alone = async (): Promise<boolean> => {
    const { groups } = await (await adminClient()).describeGroups([groupId]);
    return (groups[0]?.members.length ?? 0) <= 1;
  };

  /**
   * Partitions gained wait for their previous owner's last commit, then start from it. One that
   * has never been committed starts at once only when this consumer is alone in its group (a
   * new group, or the others left: a graceful stop commits before it leaves). Otherwise it waits
   * too: its previous owner may hold read messages that it parks and commits during this very
   * rebalance (a tier partition read ahead has no commit until a message of it is released).
   */
  const handOff = async (gained: Assignment): Promise<void> => {
    const waitMs = options.handoffMs ?? 0;
    for (const { topic, partitions } of gained) for (const p of partitions) pauser.pauseUntil(topic, p, options.clock.now() + waitMs + 5000);
    const resume = (topic: string, p: number): void => pauser.pauseUntil(topic, p, options.clock.now());
    try {
      const waiting: Assignment = [];
      const nobodyElse = await alone();
      for (const { topic, partitions } of gained) {
        // not alone, every gained partition waits: its commits need no reading before the wait
        const committed = nobodyElse ? await committedOf(topic) : undefined;
        const used = committed ? partitions.filter((p) => Number(committed.get(p) ?? -1) >= 0) : partitions;
        for (const p of partitions.filter((q) => !used.includes(q))) resume(topic, p);
        if (used.length > 0) waiting.push({ topic, partitions: used });
      }
      if (waiting.length === 0) return;
      await new Promise((resolve) => void setTimer(() => resolve(undefined), waitMs).unref());
      if (stopping) return;
      for (const { topic, partitions } of waiting) {
        const committed = await committedOf(topic);
        for (const p of partitions) {
          const offset = committed.get(p);
          if (offset !== undefined && Number(offset) >= 0 && !stopping) consumer.seek({ topic, partition: p, offset });
        }
      }
    } catch (error) {
      logger.warn({ err: error }, 'the committed offsets of partitions gained could not be read again; they start where the group said');
    }
    for (const { topic, partitions } of gained) for (const p of partitions) resume(topic, p);
  };

  consumer.on(consumer.events.REBALANCING, () => {
    const owned = new Set(owners(assigned));
    logger.debug('group rebalancing: forwards held back, committing what was written');
    options.onRebalancing((owner) => owned.has(owner)).then(() => committer.commitNow()).catch(trouble('rebalance hand-over'));
  });
  consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
    const next = Object.entries(payload.memberAssignment).map(([topic, partitions]) => ({ topic, partitions }));
    // Only what this consumer owned before and not now is lost (other flows' partitions share the hold).
    const before = new Set(owners(assigned));
    const kept = new Set(owners(next));
    const lost = new Set([...before].filter((owner) => !kept.has(owner)));
    const gained = next
      .map(({ topic, partitions }) => ({ topic, partitions: partitions.filter((p) => !before.has(ownerOf(topic, p))) }))
      .filter(({ partitions }) => partitions.length > 0);
    assigned = next;
    heard();
    pauser.onAssignment(next);
    const handedOff = (options.handoffMs ?? 0) > 0 && gained.length > 0 ? handOff(gained).catch(trouble('hand-off of partitions gained')) : undefined;
    // Ready once the first assignment is read: a replica joining a group whose other members
    // still own its partitions waits the hand-off first, and load sent the moment it said ready
    // found those partitions paused (a strict-spacing producer lost those slots for good).
    const ready = (): void => {
      joined = true;
      options.metrics.consumerJoined?.(groupId, !crashed);
    };
    if (handedOff === undefined) ready();
    else if (!joined) void handedOff.then(ready);
    options.onJoin((owner) => lost.has(owner)).then(async () => {
      await committer.commitNow();
      if (assigned === next) tracker.retain(next);
    }).catch(trouble('parking what partitions lost held'));
    logger.info({ group: groupId, assigned: next }, 'joined the group');
  });
  consumer.on(consumer.events.CRASH, ({ payload }) => {
    options.metrics.consumerCrash(groupId, payload.restart);
    if (!payload.restart) {
      crashed = true;
      options.metrics.consumerJoined?.(groupId, false);
    }
    logger.error({ err: payload.error, restart: payload.restart }, 'consumer crashed');
  });

  return {
    pauser,
    async start(eachBatch) {
      options.metrics.consumerJoined?.(groupId, false);
      await consumer.connect();
      // Partitions gained are paused until their commits were read. The first read of a group's
      // commits connects the admin client and finds the group's coordinator (~0.2 s): done
      // after the first join, it kept a fresh replica from reading for that long once it was
      // ready. Done now, a join's read takes a few ms.
      if ((options.handoffMs ?? 0) > 0) await committedOf(options.topics[0]).catch(trouble('a first look at the group\'s commits'));
      await consumer.subscribe({ topics: [...options.topics], fromBeginning: true });
      heard();
      await consumer.run({ autoCommit: false, eachBatchAutoResolve: false, partitionsConsumedConcurrently: options.partitionsConsumedConcurrently, eachBatch });
      committer.start();
    },
    joined: () => joined,
    crashed: () => crashed,
    silentMs: () => (heardAt === undefined || stopping || crashed ? 0 : Date.now() - heardAt),
    assignment: () => assigned,
    commitNow: () => committer.commitNow(),
    nudge: () => committer.nudge(),
    async stop(deadline) {
      stopping = true;
      committer.stop();
      await within(committer.commitNow(), deadline);
      pauser.close();
      // consumer.stop() waits for a join in progress; past the deadline the process leaves anyway
      // (uncommitted work is delivered again: nothing is lost).
      await within(consumer.stop(), deadline);
      await within(consumer.disconnect(), deadline + 500);
      await admin?.then((client) => client.disconnect()).catch(() => undefined);
    },
  };
};
