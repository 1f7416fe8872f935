/**
 * The faults the scenarios inject, on the suite's own services only:
 * - `pauseFor(service, ms)`: SIGSTOP to the service's process group, SIGCONT after `ms` — in a
 *   `finally`, and again by `resumeAll()` / the exit hook should the run be interrupted;
 * - `flushAll(redisUrl)`: Redis FLUSHALL;
 * - `deleteTopic` / `recreateTopic`: a topic deleted under a running sidecar and created again
 *   with the same name and settings.
 */
import { ConfigResourceTypes, ITopicConfig, Kafka } from 'kafkajs';
import Redis from 'ioredis';

export const sleep = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms));

/** Process groups paused now. */
const paused = new Set<number>();

const signalGroup = (pid: number, signal: NodeJS.Signals): boolean => {
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false;
  }
};

export const pauseGroup = (pid: number): void => {
  paused.add(pid);
  if (!signalGroup(pid, 'SIGSTOP')) throw new Error(`could not SIGSTOP process group ${pid}`);
};

export const resumeGroup = (pid: number): void => {
  signalGroup(pid, 'SIGCONT');
  paused.delete(pid);
};

/** SIGCONT to every group still paused (clean-up; sync, so usable from the exit hook). */
export const resumeAll = (): void => {
  for (const pid of [...paused]) resumeGroup(pid);
};

/** Pauses the group for `ms`; resolves once it was resumed (always, also when `during` throws). */
export const pauseFor = async (service: { pid: number }, ms: number, during?: () => Promise<void>): Promise<{ from: number; to: number }> => {
  const from = Date.now();
  pauseGroup(service.pid);
  try {
    await Promise.all([sleep(ms), during?.()]);
  } finally {
    resumeGroup(service.pid);
  }
  return { from, to: Date.now() };
};

export const flushAll = async (redisUrl: string): Promise<void> => {
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    await redis.flushall();
  } finally {
    redis.disconnect();
  }
};

export const deleteTopic = async (kafka: Kafka, topic: string): Promise<void> => {
  const admin = kafka.admin();
  await admin.connect();
  try {
    await admin.deleteTopics({ topics: [topic], timeout: 30_000 });
  } finally {
    await admin.disconnect();
  }
};

/** Creates `topic` again (retried while the broker still finishes the deletion); resolves with the attempts it took. */
export const recreateTopic = async (kafka: Kafka, topic: string, partitions: number, configEntries: ITopicConfig['configEntries']): Promise<number> => {
  const admin = kafka.admin();
  await admin.connect();
  try {
    for (let attempt = 1; ; attempt += 1) {
      try {
        const created = await admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: partitions, configEntries }] });
        if (created) return attempt;
        throw new Error(`${topic} exists already (created by someone else)`);
      } catch (error) {
        if (attempt >= 40) throw error;
        await sleep(250);
      }
    }
  } finally {
    await admin.disconnect();
  }
};

/**
 * Sets `max.message.bytes` of a downstream topic (the oversize scenario's). AlterConfigs replaces
 * the topic's whole config, so the LogAppendTime the fixture set is given again.
 */
export const setMaxMessageBytes = async (kafka: Kafka, topic: string, bytes: number): Promise<void> => {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const configEntries = [{ name: 'max.message.bytes', value: String(bytes) }, { name: 'message.timestamp.type', value: 'LogAppendTime' }];
    await admin.alterConfigs({ validateOnly: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configEntries }] });
  } finally {
    await admin.disconnect();
  }
};
