/**
 * Kafka for integration tests, from SLUICE_KAFKA_BROKERS:
 * - `createKafka()` a kafkajs client whose producers hash keys as Java clients do (kafkajs's
 *   DefaultPartitioner, murmur2) unless a test chooses another partitioner;
 * - `createTopic(kafka, options)` / `createTopics(kafka, n, options)` create random-named topics
 *   up front and wait for their leaders;
 * - `produce(kafka, topic, messages)` writes and resolves once acknowledged;
 * - `waitForMessages(kafka, topic, countOrPredicate, options)` reads through a fresh consumer
 *   group from the beginning until enough messages came; `consumeAll(kafka, topic)` reads
 *   everything up to the current end offsets. Both return messages with headers and timestamps.
 */
import { IHeaders, ITopicConfig, Kafka, KafkaConfig, logLevel, Message, Partitioners, ProducerConfig, RecordMetadata } from 'kafkajs';
import { randomGroupId, randomName, randomTopicName } from './names';
import { createTopicsWithLeaders } from '../../src/topics/create-topics';
import { waitFor } from './wait';

export const kafkaBrokers = (): string[] => {
  const value = process.env.SLUICE_KAFKA_BROKERS;
  if (!value) throw new Error('SLUICE_KAFKA_BROKERS is not set: run the tests with `npm test` or export what `npm run services -- up` prints');
  return value.split(',').map((broker) => broker.trim());
};

/** Producers with the partitioner chosen: the Java-compatible one, as the sidecar's. */
class TestKafka extends Kafka {
  producer(config: ProducerConfig = {}) {
    return super.producer({ createPartitioner: Partitioners.DefaultPartitioner, ...config });
  }
}

export const createKafka = (config: Partial<KafkaConfig> = {}): Kafka =>
  new TestKafka({ clientId: randomName('sluice-test'), brokers: kafkaBrokers(), logLevel: logLevel.NOTHING, ...config });

export interface TopicOptions {
  prefix?: string; // the name becomes sluice-<prefix>-<time>-<random>
  partitions?: number; // default 1
  configEntries?: ITopicConfig['configEntries'];
}

export const createTopics = async (kafka: Kafka, count: number, options: TopicOptions = {}): Promise<string[]> => {
  const topics = Array.from({ length: count }, () => randomTopicName(options.prefix));
  const admin = kafka.admin();
  await admin.connect();
  try {
    await createTopicsWithLeaders(admin, topics.map((topic) => ({ topic, numPartitions: options.partitions ?? 1, configEntries: options.configEntries })));
  } finally {
    await admin.disconnect();
  }
  return topics;
};

export const createTopic = async (kafka: Kafka, options: TopicOptions = {}): Promise<string> =>
  (await createTopics(kafka, 1, options))[0] as string;

export const produce = async (kafka: Kafka, topic: string, messages: Message[]): Promise<RecordMetadata[]> => {
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  try {
    return await producer.send({ topic, messages, acks: -1 });
  } finally {
    await producer.disconnect();
  }
};

export interface ConsumedMessage {
  topic: string;
  partition: number;
  offset: string;
  key: Buffer | null;
  value: Buffer | null;
  headers: IHeaders; // a repeated header key comes as an array of its values, in order
  timestamp: string; // ms since the epoch, as kafkajs gives it
}

export interface ConsumeOptions {
  timeoutMs?: number; // default 30 s
  groupId?: string; // default a random group
}

type Enough = number | ((messages: ConsumedMessage[]) => boolean);

/** Consumes `topic` from the beginning with a new group until `enough` holds; then disconnects. */
export const waitForMessages = async (
  kafka: Kafka, topic: string, enough: Enough, { timeoutMs = 30_000, groupId = randomGroupId() }: ConsumeOptions = {},
): Promise<ConsumedMessage[]> => {
  const done = typeof enough === 'number' ? (all: ConsumedMessage[]) => all.length >= enough : enough;
  const messages: ConsumedMessage[] = [];
  const consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 100, allowAutoTopicCreation: false });
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ topic: from, partition, message }) => {
        const { key, value, offset, timestamp } = message;
        messages.push({ topic: from, partition, offset, key, value, headers: message.headers ?? {}, timestamp });
      },
    });
    await waitFor(() => done(messages), { timeoutMs, message: `messages on ${topic} (got ${messages.length} so far)` });
    return messages;
  } finally {
    await consumer.disconnect();
  }
};

/** Every message in `topic` up to its end offsets at the time of the call. */
export const consumeAll = async (kafka: Kafka, topic: string, options: ConsumeOptions = {}): Promise<ConsumedMessage[]> => {
  const admin = kafka.admin();
  await admin.connect();
  const ends = await admin.fetchTopicOffsets(topic).finally(() => admin.disconnect());
  const pending = ends.filter((end) => BigInt(end.high) > BigInt(end.low));
  if (pending.length === 0) return [];
  const reached = (all: ConsumedMessage[]): boolean =>
    pending.every((end) => all.some((m) => m.partition === end.partition && BigInt(m.offset) + 1n >= BigInt(end.high)));
  return waitForMessages(kafka, topic, reached, options);
};

/** The values of header `key` as strings, in order (one element unless the key repeats). */
export const headerValues = (headers: IHeaders, key: string): string[] => {
  const value = headers[key];
  if (value === undefined) return [];
  return (Array.isArray(value) ? value : [value]).map((v) => v.toString());
};
