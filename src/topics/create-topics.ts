/**
 * Creates topics and waits until every partition has a leader that serves it. kafkajs's own
 * `waitForLeaders` gives up on the first "This server does not host this topic-partition"
 * (UNKNOWN_TOPIC_OR_PARTITION), which a KRaft broker answers for a moment after creating a
 * topic; here any metadata error is retried until `timeoutMs`. Metadata names a leader a
 * moment before that broker serves the partition (a produce then is refused with
 * NOT_LEADER_OR_FOLLOWER for that partition while the others of the same request are appended,
 * and kafkajs resends the whole request); so a topic is ready once its offsets can be listed
 * (ListOffsets is answered by the partition's leader only). A topic that already exists
 * (another replica created it first) is not an error.
 */
import type { Admin, ITopicConfig } from 'kafkajs';
import { SluiceError } from '../errors';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const isAlreadyThere = (error: unknown): boolean => {
  const e = error as { type?: string; errors?: { type?: string }[] } | undefined;
  if (e?.type === 'TOPIC_ALREADY_EXISTS') return true;
  return Array.isArray(e?.errors) && e.errors.length > 0 && e.errors.every((x) => x.type === 'TOPIC_ALREADY_EXISTS');
};

export const createTopicsWithLeaders = async (admin: Admin, topics: ITopicConfig[], { timeoutMs = 30_000 }: { timeoutMs?: number } = {}): Promise<void> => {
  try {
    await admin.createTopics({ waitForLeaders: false, topics });
  } catch (error) {
    if (!isAlreadyThere(error)) throw error;
  }
  const deadline = Date.now() + timeoutMs;
  const names = topics.map((t) => t.topic);
  for (let lastError: unknown; ; await sleep(100)) {
    try {
      const { topics: meta } = await admin.fetchTopicMetadata({ topics: names });
      if (meta.length === names.length && meta.every((t) => t.partitions.length > 0 && t.partitions.every((p) => p.leader >= 0))) {
        for (const name of names) await admin.fetchTopicOffsets(name);
        return;
      }
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      const why = lastError instanceof Error ? `: ${lastError.message}` : '';
      throw new SluiceError('KAFKA_UNREACHABLE', `topics ${names.join(', ')} have no leader ${timeoutMs} ms after their creation${why}`, { cause: lastError });
    }
  }
};
