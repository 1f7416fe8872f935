/**
 * The plain pipe sluice is measured against (docs/design.md "Performance design"): kafkajs eachBatch
 * → sendBatch (acks -1) → commit, with the consumer and producer settings of `sluice run`
 * (INGRESS_CONSUMER_SETTINGS, manual offsets, 8 partitions at once; PRODUCER_SETTINGS, with
 * kafkajs's own retries, since the pipe has none of its own). Run as a child process by the
 * harness; stops on SIGTERM; tells the harness over IPC when it has joined its group.
 */
import { Kafka, logLevel, type Message } from 'kafkajs';
import { PRODUCER_SETTINGS } from '../../src/produce/producer-settings';
import { CONSUMER_SETTINGS as INGRESS_CONSUMER_SETTINGS } from '../../src/flow/group-consumer';

const required = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set (the benchmark harness sets it)`);
  return value;
};

const main = async (): Promise<void> => {
  const topic = required('BENCH_INGRESS');
  const downstream = required('BENCH_DOWNSTREAM');
  const kafka = new Kafka({
    clientId: 'bench-pipe',
    brokers: required('BENCH_BROKERS').split(','),
    retry: { retries: 5, initialRetryTime: 200, maxRetryTime: 2000 },
    logLevel: logLevel.WARN,
  });
  const consumer = kafka.consumer({ groupId: required('BENCH_GROUP'), allowAutoTopicCreation: false, ...INGRESS_CONSUMER_SETTINGS });
  const producer = kafka.producer(PRODUCER_SETTINGS);
  await producer.connect();
  await consumer.connect();
  consumer.on(consumer.events.GROUP_JOIN, () => process.send?.({ ready: true }));
  await consumer.subscribe({ topics: [topic], fromBeginning: true });
  await consumer.run({
    autoCommit: false,
    eachBatchAutoResolve: false,
    partitionsConsumedConcurrently: 8,
    eachBatch: async ({ batch, resolveOffset, heartbeat }) => {
      const messages: Message[] = batch.messages.map((m) => ({ key: m.key, value: m.value, headers: m.headers, timestamp: m.timestamp }));
      if (messages.length > 0) await producer.sendBatch({ acks: -1, topicMessages: [{ topic: downstream, messages }] });
      resolveOffset(batch.lastOffset());
      await consumer.commitOffsets([{ topic, partition: batch.partition, offset: String(Number(batch.lastOffset()) + 1) }]);
      await heartbeat();
    },
  });
  const stop = async (): Promise<void> => {
    await consumer.disconnect();
    await producer.disconnect();
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop());
};

main().catch((error: unknown) => {
  process.stderr.write(`bench pipe: ${(error as Error)?.stack ?? String(error)}\n`);
  process.exit(3);
});
