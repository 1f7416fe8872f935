/**
 * Jest global setup of the `integration` project. Integration tests need a real broker, Redis
 * and Redis Cluster: their addresses come from SLUICE_KAFKA_BROKERS, SLUICE_REDIS_URL and
 * SLUICE_REDIS_CLUSTER_NODES; when any is missing, the services are brought up (or reused)
 * here with the same code as `npm run services -- up --redis-cluster`, and left running.
 * Then one consumer group is warmed up (a fresh broker answers the first join with
 * GROUP_LOAD_IN_PROGRESS while it loads __consumer_offsets).
 */
import { up } from '../../scripts/services/services';
import { createKafka, createTopic, produce, waitForMessages } from './kafka';

const REQUIRED = ['SLUICE_KAFKA_BROKERS', 'SLUICE_REDIS_URL', 'SLUICE_REDIS_CLUSTER_NODES'];

const bringServicesUp = async (): Promise<void> => {
  const missing = REQUIRED.filter((name) => !process.env[name]);
  if (missing.length === 0) return;
  process.stderr.write(`\nglobal setup: ${missing.join(', ')} not set: starting (or reusing) the services\n`);
  const { env, kafkaVersion } = await up({
    kafka: !process.env.SLUICE_KAFKA_BROKERS,
    redis: !process.env.SLUICE_REDIS_URL,
    redisCluster: !process.env.SLUICE_REDIS_CLUSTER_NODES,
  });
  for (const [key, value] of Object.entries(env)) process.env[key] ??= value;
  const kafka = kafkaVersion === undefined ? '' : `Kafka ${kafkaVersion} at ${process.env.SLUICE_KAFKA_BROKERS}; `;
  process.stderr.write(`global setup: ${kafka}stop them with \`npm run services -- down\`\n`);
};

const warmUpConsumerGroup = async (): Promise<void> => {
  const kafka = createKafka();
  const topic = await createTopic(kafka, { prefix: 'warm-up' });
  await produce(kafka, topic, [{ value: 'warm-up' }]);
  await waitForMessages(kafka, topic, 1, { timeoutMs: 60_000 });
  const admin = kafka.admin();
  await admin.connect();
  await admin.deleteTopics({ topics: [topic] }).finally(() => admin.disconnect());
};

export default async function globalSetup(): Promise<void> {
  await bringServicesUp();
  await warmUpConsumerGroup();
}
