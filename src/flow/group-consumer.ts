/**
 * The one consumer wrapper: a kafkajs consumer in a group with manual offsets (autoCommit and
 * eachBatchAutoResolve off), fromBeginning for a new group, a short maxWaitTimeInMs so a
 * resume takes effect within ~100 ms, the acknowledged prefix committed every
 * commit.intervalMs (and within a few ms of an acknowledgement). kafkajs has no revoke
 * callback and rejoins at once, so a rebalance is read from its events:
 *   REBALANCING → `onRebalancing(owned)`: the flow stops forwarding; what was written is
 *                 committed (a commit refused as of a past generation hands over the same way:
 *                 kafkajs joins again after UNKNOWN_MEMBER_ID without this event);
 *   GROUP_JOIN  → `onJoin(lost)`: the flow parks what is still held for partitions lost; that
 *                 is committed (the classic group protocol takes a commit of this member's
 *                 generation for any partition) before they are forgotten, and then their
 *                 hand-off fences are released. Partitions gained start once their previous
 *                 owner released their fence (at most `handoffMs`: src/flow/handoff-fence.ts),
 *                 from the offset committed then: nothing is sent by both. Pause state is re-derived.
 * A CRASH with restart false means the consumer is gone for good (/healthz says so).
 * Out of its group without a crash (kafkajs's runner can be left fetching or waiting without a
 * member id after a broker stall: its rejoin after UNKNOWN_MEMBER_ID or a rebalance error is
 * retried inside its fetch loop, which goes on with the old assignment and skips heartbeats
 * while the member id is null; docs/kafkajs.md "Groups"): when no heartbeat or join came for a
 * third of a session timeout (kafkajs heartbeats every second while it runs) and the broker's view of
 * the group (describeGroups) lacks this member for REJOIN_GRACE_MS, the consumer is
 * disconnected and run again; `rejoinFailed()` (/healthz)
 * says when that did not bring it back within a session and a rebalance timeout.
 * `silentMs()` says how long nothing was heard (heartbeat, fetch or join).
 */
import type { Admin, Consumer, ConsumerConfig, EachBatchPayload, Kafka } from 'kafkajs';
import type { Logger } from 'pino';
import type { Clock } from '../clock';
import { type CommitTarget, createCommitter, isStaleGeneration, type OffsetTracker } from '../commit/committer';
import type { Metrics } from '../metrics/types';
import { setTimer } from '../timers';
import { ownerOf } from './flow-item';
import { createHandoffFence, type FenceStore, type Part } from './handoff-fence';
import { type Assignment, createPartitionPauser, type PartitionPauser } from './partition-pauser';

/**
 * The handler never blocks, so a short session lets a dead replica's partitions move on within
 * ~10 s. While every partition it has is paused (a hand-off, the hold full) kafkajs sends no
 * fetch and sleeps maxWaitTimeInMs: a resume takes effect after up to that long (at 200 ms
 * that cost a fresh replica its first ~0.2 s of reading; strict spacing never wins it back).
 * The rebalance timeout is how long the coordinator waits for the members it knows to join
 * again: after a broker stall it may reload the group with member ids the consumers have
 * already left behind (they rejoined under new ones), and the join waited the whole 10 s for
 * them (2 of 80 stalls: back after 10.6–10.7 s, past a session timeout). A member here joins
 * again within milliseconds of a rebalance (the handler never blocks), so 6 s is ample.
 */
export const CONSUMER_SETTINGS = { maxWaitTimeInMs: 100, sessionTimeout: 10_000, rebalanceTimeout: 6_000, heartbeatInterval: 1_000 } as const;

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
  /** The longest a partition gained in a rebalance waits for its previous owner's fence (0: no hand-off at all). */
  handoffMs?: number;
  /** Where the hand-off fences are (none: every partition gained waits the whole `handoffMs`, unless alone in its group). */
  fences?: { store: FenceStore; keyPrefix: string };
  /** The out-of-group watchdog: how often it looks, how long the broker must lack this member before it rejoins (tests). */
  watchdog?: { everyMs?: number; graceMs?: number };
}

/** Once the broker's group lacks this member, how long before the consumer is run again (kafkajs may be rejoining by itself under a new member id). */
export const REJOIN_GRACE_MS = 2000;

export interface GroupConsumer {
  pauser: PartitionPauser;
  start(eachBatch: (payload: EachBatchPayload) => Promise<void>): Promise<void>;
  /** Joined its group, and reads the partitions of its first assignment (their hand-off is over): /readyz. */
  joined(): boolean;
  crashed(): boolean;
  /** How long since the last heartbeat, fetch or join (0 before the start, while stopping and after a crash). */
  silentMs(): number;
  /** It dropped out of its group, and running it again did not bring it back (/healthz); false again once it joins. */
  rejoinFailed(): boolean;
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
  let joined = false;
  let crashed = false;
  /** Pod-clock ms of the last sign of the group (heartbeat, fetch, join); undefined until started. */
  let heardAt: number | undefined;
  const heard = (): void => {
    heardAt = Date.now();
  };
  /** Pod-clock ms of the last heartbeat or join: the group's own word that this member is in it (a fetch is not). */
  let memberAt: number | undefined;
  consumer.on(consumer.events.HEARTBEAT, () => {
    heard();
    memberAt = Date.now();
  });
  /**
   * Set by the watchdog: the next FETCH event throws UNKNOWN_MEMBER_ID out of kafkajs's fetch
   * loop (its listeners run synchronously inside `runner.fetch`), and the runner then rejoins by
   * itself, in its own loop (memberId = null, joinAndSync). Nothing else touches the consumer.
   */
  let askRejoin = false;
  /** Pod-clock ms of the last FETCH event (kafkajs's fetch loop runs) and of the last crash kafkajs restarts from. */
  let fetchedAt = 0;
  let restartingAt = 0;
  consumer.on(consumer.events.FETCH, () => {
    heard();
    fetchedAt = Date.now();
    if (!askRejoin) return;
    askRejoin = false;
    throw Object.assign(new Error('this member is out of its group (sluice\'s watchdog): rejoin'), { type: 'UNKNOWN_MEMBER_ID' });
  });
  let assigned: Assignment = [];
  let memberId = '';
  let joins = 0;
  let rejoinFailed = false;
  /** The watchdog is running the consumer again: a crash now is one failed attempt, not the end. */
  let rejoining = false;
  /** From a rebalance's start (REBALANCING, a commit refused as of a past generation, a rejoin) until the next join: forwards are held back. */
  let handingOver = false;
  /** The flow holds its forwards back, told which partitions this member owned. */
  const handOverOwned = (): Promise<void> => {
    const owned = new Set(owners(assigned));
    handingOver = true;
    return options.onRebalancing((owner) => owned.has(owner));
  };
  /**
   * A commit refused as of a past generation (ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID) says the
   * group went on without this member: its partitions may be another's already. Forwards are held
   * back from then until the next join, as at REBALANCING (after UNKNOWN_MEMBER_ID kafkajs joins
   * again without that event). A refusal answered after a join was of the generation before.
   */
  const commitTarget: CommitTarget = {
    async commitOffsets(points) {
      const sentAt = joins;
      try {
        await consumer.commitOffsets(points);
      } catch (error) {
        if (!handingOver && !stopping && joins === sentAt && isStaleGeneration(error)) {
          logger.warn({ group: groupId, err: error }, 'a commit was refused as of a past generation (the group went on without this member): forwards are held back until it joins again');
          handOverOwned().catch(trouble('hand-over after a commit refused as of a past generation'));
        }
        throw error;
      }
    },
  };
  const committer = createCommitter({ tracker, target: commitTarget, logger, intervalMs: options.commitIntervalMs });
  const handoffMs = options.handoffMs ?? 0;
  const fence = handoffMs > 0
    ? createHandoffFence({ store: options.fences?.store, keyPrefix: options.fences?.keyPrefix ?? '', group: groupId, metrics: options.metrics, logger })
    : undefined;
  const partsOf = (list: Assignment): Part[] => list.flatMap(({ topic, partitions }) => partitions.map((partition) => ({ topic, partition })));

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
   * Partitions gained whose hand-off is not over ("topic/partition" → the join whose hand-off
   * starts them). They stay paused through later joins that keep them (a rebalance right after
   * the join that gained them: each join resumes every partition assigned) and are handed off
   * again by such a join; one lost meanwhile is dropped, and its stale hand-off starts nothing.
   */
  const handingOff = new Map<string, number>();
  const partKey = ({ topic, partition }: Part): string => `${topic}/${partition}`;

  /**
   * Partitions gained wait until their previous owner released their fence (after its final
   * commit of them; at most `handoffMs`), then start from the offset committed then. A fence
   * free (a new group, an owner that stopped gracefully) is claimed at once. The broker's
   * group is no sign that the previous owner is done: after a broker stall the first member
   * back finds itself alone while the others, dropped by the broker, still hold and send what
   * they read (their commits refused) until their own rejoin; only without a fence store does
   * being alone in the group start partitions gained at once.
   */
  const handOff = async (gained: Assignment, member: string, join: number): Promise<void> => {
    const parts = partsOf(gained);
    for (const part of parts) {
      handingOff.set(partKey(part), join);
      pauser.pauseUntil(part.topic, part.partition, options.clock.now() + handoffMs + 5000);
    }
    /** Still this hand-off's to start (not lost since, nor handed off by a later join). */
    const mine = (part: Part): boolean => handingOff.get(partKey(part)) === join;
    try {
      if (!options.fences?.store && await alone().catch(() => false)) {
        fence?.own(member, parts);
        return;
      }
      await fence?.acquire(member, parts, handoffMs, (part) => handingOff.has(partKey(part)));
      // Lost while waiting: not this member's to renew (a claim made as the wait expired is given back).
      const now = new Set(partsOf(assigned).map(partKey));
      const gone = parts.filter((part) => !now.has(partKey(part)));
      if (gone.length > 0) await fence?.release(gone);
      if (stopping) return;
      for (const { topic, partitions } of gained) {
        if (!partitions.some((partition) => mine({ topic, partition }))) continue;
        const committed = await committedOf(topic);
        for (const p of partitions) {
          const offset = committed.get(p);
          if (offset !== undefined && Number(offset) >= 0 && !stopping && mine({ topic, partition: p })) consumer.seek({ topic, partition: p, offset });
        }
      }
    } catch (error) {
      logger.warn({ err: error }, 'the committed offsets of partitions gained could not be read again; they start where the group said');
    } finally {
      for (const part of parts) {
        if (!mine(part)) continue;
        handingOff.delete(partKey(part));
        pauser.pauseUntil(part.topic, part.partition, options.clock.now());
      }
    }
  };

  /**
   * After the final commit of partitions lost (what was held parked): the fence of each is
   * released once it is settled — every message taken from it acknowledged, and committed — so
   * its new owner starts from that commit. Until then, for up to the hand-off bound, it commits
   * again. One not settled by then keeps its fence (no longer renewed, it expires): its new
   * owner's wait runs out, counted, and it starts from the last commit. One a later join gave back
   * to this member meanwhile is not released (its fence is this member's again).
   * The flow's wait for its writes has a timer that a frozen process (SIGSTOP, a long GC pause)
   * finds run out at once: a write still under way then was not in that commit, and releasing
   * at once let the new owner read it again (rebalance-stopped-owner's duplicates).
   */
  const releaseLost = async (lost: Part[], since: number): Promise<void> => {
    if (!fence || lost.length === 0) return;
    const settled = ({ topic, partition }: Part): boolean => tracker.settled(topic, partition);
    // Assigned to this member again by a later join meanwhile: its fence is this member's again.
    const mineAgain = (part: Part): boolean => partsOf(assigned).some((p) => p.topic === part.topic && p.partition === part.partition);
    /** Released, or assigned back: nothing left to do for them. */
    let done: Part[] = [];
    const releaseSettled = async (): Promise<void> => {
      const now = lost.filter((part) => !done.includes(part) && (mineAgain(part) || settled(part)));
      done = [...done, ...now];
      const free = now.filter((part) => !mineAgain(part));
      if (free.length > 0) await fence.release(free);
    };
    await releaseSettled();
    while (done.length < lost.length && Date.now() < since + handoffMs && !stopping) {
      await new Promise((resolve) => setTimeout(resolve, 20).unref());
      await committer.commitNow();
      await releaseSettled();
    }
    const left = lost.filter((part) => !done.includes(part));
    if (left.length > 0) logger.warn({ partitions: left }, 'partitions lost were not acknowledged and committed within the hand-off bound: their fences are left to expire, and their new owner starts them from their last commit when its wait runs out (what was sent since may be sent again)');
  };

  consumer.on(consumer.events.REBALANCING, () => {
    logger.debug('group rebalancing: forwards held back, committing what was written');
    handOverOwned().then(() => committer.commitNow()).catch(trouble('rebalance hand-over'));
  });
  consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
    const joinedAt = Date.now();
    const next = Object.entries(payload.memberAssignment).map(([topic, partitions]) => ({ topic, partitions }));
    // Only what this consumer owned before and not now is lost (other flows' partitions share the hold).
    const before = new Set(owners(assigned));
    const kept = new Set(owners(next));
    const lost = new Set([...before].filter((owner) => !kept.has(owner)));
    // A partition whose hand-off is not over is gained again (its previous owner may not be done yet).
    const nextKeys = new Set(partsOf(next).map(partKey));
    for (const key of [...handingOff.keys()]) if (!nextKeys.has(key)) handingOff.delete(key);
    const waiting = (topic: string, p: number): boolean => handingOff.has(partKey({ topic, partition: p }));
    const gained = next
      .map(({ topic, partitions }) => ({ topic, partitions: partitions.filter((p) => !before.has(ownerOf(topic, p)) || waiting(topic, p)) }))
      .filter(({ partitions }) => partitions.length > 0);
    const lostParts = partsOf(assigned).filter(({ topic, partition }) => lost.has(ownerOf(topic, partition)));
    assigned = next;
    handingOver = false;
    memberId = payload.memberId;
    joins += 1;
    rejoinFailed = false;
    heard();
    memberAt = Date.now();
    pauser.onAssignment(next);
    fence?.retain(partsOf(next));
    fence?.own(memberId, partsOf(next).filter(({ topic, partition }) => before.has(ownerOf(topic, partition)) && !waiting(topic, partition)));
    const handedOff = fence && gained.length > 0 ? handOff(gained, memberId, joins).catch(trouble('hand-off of partitions gained')) : undefined;
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
      await releaseLost(lostParts, joinedAt);
      if (assigned === next) tracker.retain(next);
    }).catch(trouble('parking what partitions lost held'));
    logger.info({ group: groupId, assigned: next }, 'joined the group');
  });
  consumer.on(consumer.events.CRASH, ({ payload }) => {
    options.metrics.consumerCrash(groupId, payload.restart);
    if (payload.restart) restartingAt = Date.now();
    if (!payload.restart && rejoining) {
      logger.warn({ err: payload.error }, 'running the consumer again crashed (the coordinator not found yet); tried again');
      return;
    }
    if (!payload.restart) {
      crashed = true;
      options.metrics.consumerJoined?.(groupId, false);
    }
    logger.error({ err: payload.error, restart: payload.restart }, 'consumer crashed');
  });

  // ---- the out-of-group watchdog (see the file's comment)
  const sessionMs = options.config?.sessionTimeout ?? CONSUMER_SETTINGS.sessionTimeout;
  const rebalanceMs = options.config?.rebalanceTimeout ?? CONSUMER_SETTINGS.rebalanceTimeout;
  const graceMs = options.watchdog?.graceMs ?? REJOIN_GRACE_MS;
  let runConfig: Parameters<Consumer['run']>[0] | undefined;
  let watchdog: NodeJS.Timeout | undefined;
  let watching = false;
  /** When the broker's view of the group was first seen without this member (undefined: in it, or not looked). */
  let outSince: number | undefined;

  /** Whether the broker counts this member in its group; undefined when it does not answer (nothing to act on then). */
  const inGroup = async (): Promise<boolean | undefined> => {
    try {
      const described = await within((async () => (await adminClient()).describeGroups([groupId]))(), Date.now() + Math.min(sessionMs, 3000));
      return described === undefined ? undefined : (described.groups[0]?.members ?? []).some((m) => m.memberId === memberId);
    } catch {
      return undefined;
    }
  };

  /** Stops forwarding (as for a rebalance), disconnects, connects and runs the consumer again; a join within a session and a rebalance timeout is success. */
  /**
   * Stops forwarding (as for a rebalance: what it holds goes back at the join), then disconnects,
   * connects and runs the consumer again, attempt after attempt (right after a broker stall the
   * group coordinator may not be found yet: kafkajs then crashes for good), until it joins or a
   * session and a rebalance timeout have passed.
   */
  const rejoin = async (): Promise<void> => {
    logger.error({ group: groupId, memberId, silentMs: Date.now() - (memberAt ?? Date.now()) },
      'the consumer is out of its group (no heartbeat or join, and the group lacks it) and kafkajs did not rejoin: disconnecting and running it again');
    const before = joins;
    const started = Date.now();
    const deadline = started + sessionMs + rebalanceMs;
    rejoining = true;
    // Commits are refused outside the group: only the hand-over matters, and it starts at once.
    handOverOwned().catch(trouble('rebalance hand-over before a rejoin'));
    try {
      for (let attempt = 1; joins === before && Date.now() < deadline && !stopping; attempt += 1) {
        try {
          await within(consumer.disconnect(), Math.min(deadline, Date.now() + 5000));
          if (stopping) return;
          await within(consumer.connect(), deadline);
          if (stopping || !runConfig) return;
          await within(consumer.run(runConfig), deadline); // resolves at the join, or after a crash
        } catch (error) {
          logger.warn({ err: error, attempt }, 'running the consumer again failed; tried again');
        }
        const next = Math.min(deadline, Date.now() + 1000);
        while (joins === before && Date.now() < next && !stopping) await new Promise((resolve) => setTimeout(resolve, 50).unref());
      }
    } finally {
      rejoining = false;
      memberAt = Date.now(); // the next silence counts from here
    }
    if (joins > before) {
      logger.warn({ group: groupId, ms: Date.now() - started }, 'the consumer is back in its group');
      return;
    }
    if (stopping) return;
    rejoinFailed = true;
    logger.error({ group: groupId, ms: Date.now() - started }, 'the consumer could not rejoin its group: /healthz fails until it does (it is tried again)');
  };

  const watch = async (): Promise<void> => {
    if (watching || stopping || crashed || memberAt === undefined || runConfig === undefined) return;
    watching = true;
    try {
      if (Date.now() - memberAt < sessionMs / 3) {
        outSince = undefined;
        return;
      }
      const member = await inGroup();
      if (member !== false) {
        outSince = undefined;
        return;
      }
      outSince ??= Date.now();
      if (Date.now() - outSince < graceMs || Date.now() - memberAt < sessionMs / 3) return;
      const now = Date.now();
      if (now - fetchedAt < 2000) {
        // kafkajs's fetch loop runs without a member (its rejoin gave up): ask it to rejoin from inside.
        if (!askRejoin) logger.error({ group: groupId, memberId, silentMs: now - memberAt }, 'the consumer is out of its group (no heartbeat or join, and the group lacks it) while kafkajs goes on fetching: asking kafkajs to rejoin');
        askRejoin = true;
        memberAt = now; // look again after a third of a session timeout
        outSince = undefined;
        return;
      }
      // kafkajs restarting itself after a crash: let it (running it again meanwhile races its restart)
      if (now - restartingAt < rebalanceMs) return;
      outSince = undefined;
      await rejoin();
    } finally {
      watching = false;
    }
  };

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
      runConfig = { autoCommit: false, eachBatchAutoResolve: false, partitionsConsumedConcurrently: options.partitionsConsumedConcurrently, eachBatch };
      await consumer.run(runConfig);
      memberAt ??= Date.now();
      committer.start();
      watchdog = setInterval(() => void watch().catch(trouble('the group watchdog')), options.watchdog?.everyMs ?? 1000);
      watchdog.unref();
    },
    joined: () => joined,
    crashed: () => crashed,
    silentMs: () => (heardAt === undefined || stopping || crashed ? 0 : Date.now() - heardAt),
    rejoinFailed: () => rejoinFailed && !stopping,
    assignment: () => assigned,
    commitNow: () => committer.commitNow(),
    nudge: () => committer.nudge(),
    async stop(deadline) {
      stopping = true;
      if (watchdog) clearInterval(watchdog);
      committer.stop();
      await within(committer.commitNow(), deadline);
      // committed: whoever gets these partitions next may start them at once
      fence?.close();
      await within(fence?.release(partsOf(assigned)) ?? Promise.resolve(), Math.min(deadline, Date.now() + 1000));
      pauser.close();
      // consumer.stop() waits for a join in progress; past the deadline the process leaves anyway
      // (uncommitted work is delivered again: nothing is lost).
      await within(consumer.stop(), deadline);
      await within(consumer.disconnect(), deadline + 500);
      await admin?.then((client) => client.disconnect()).catch(() => undefined);
    },
  };
};
