/**
 * Ingress batches compressed with gzip, snappy, lz4 and zstd (as Java producers write them)
 * are read and forwarded; the topic check at start stops with exit 2 naming the topic; a
 * message too large for the downstream topic is dead-lettered `too-large`, never skipped.
 */
import { spawnSync } from 'node:child_process';
import { CompressionCodecs, CompressionTypes, ConfigResourceTypes } from 'kafkajs';
import { registerCodecs } from '../../../src/codecs/register-codecs';
import { createTopicsWithLeaders } from '../../../src/topics/create-topics';
import { createKafka, createTopic, headerValues, waitForMessages } from '../../helpers/kafka';
import { waitFor } from '../../helpers/wait';
import { createScenario, missing, Sidecar, startSidecar } from './sidecar-fixture';

const kafka = createKafka();
const running: Sidecar[] = [];
const quotas = 'default:\n  rate: 1000/s\n  queue: 1m\n';

/** lz4 and zstd for the test's own producer: compressed by the reference command-line tools, as a Java producer would. */
const byCli = (command: string) => () => ({
  compress: async (encoder: { buffer: Buffer }) => {
    const out = spawnSync(command, ['-q', '-c'], { input: encoder.buffer });
    if (out.status !== 0) throw new Error(`${command} failed: ${out.stderr.toString()}`);
    return out.stdout;
  },
  decompress: async () => {
    throw new Error('not used by the test producer');
  },
});

beforeAll(() => {
  registerCodecs();
  const codecs = CompressionCodecs as unknown as Record<number, unknown>;
  codecs[CompressionTypes.LZ4] = byCli('lz4');
  codecs[CompressionTypes.ZSTD] = byCli('zstd');
});

afterAll(async () => {
  await Promise.all(running.map((s) => s.stop('SIGKILL')));
});

describe('when ingress batches are compressed with gzip, snappy, lz4 and zstd', () => {
  it('reads and forwards every message of every batch', async () => {
    const scenario = await createScenario(kafka, { quotas });
    const producer = kafka.producer({ allowAutoTopicCreation: false });
    await producer.connect();
    const sent: string[] = [];
    const codecs = { gzip: CompressionTypes.GZIP, snappy: CompressionTypes.Snappy, lz4: CompressionTypes.LZ4, zstd: CompressionTypes.ZSTD };
    for (const [name, compression] of Object.entries(codecs)) {
      const messages = Array.from({ length: 20 }, (_, i) => ({ value: `${name}:${i}:${'x'.repeat(200)}`, headers: { 'producer-id': name } }));
      await producer.send({ topic: scenario.ingress, compression, messages, acks: -1 });
      sent.push(...messages.map((m) => m.value));
    }
    await producer.disconnect();
    const sidecar = startSidecar(scenario);
    running.push(sidecar);
    const downstream = await waitForMessages(kafka, scenario.downstream, sent.length, { timeoutMs: 60_000 });
    expect(missing(sent, downstream)).toEqual([]);
    expect(sidecar.lines.filter((l) => l.includes('"level":"error"'))).toEqual([]);
  }, 120_000);
});

describe('when the downstream topic does not exist', () => {
  it('exits 2 naming the topic', async () => {
    const scenario = await createScenario(kafka, { quotas, env: { SLUICE_DOWNSTREAM_TOPIC: 'sluice-no-such-topic' } });
    const sidecar = startSidecar(scenario);
    expect(await sidecar.exited).toBe(2);
    expect(sidecar.lines.join('\n')).toContain('topic sluice-no-such-topic: does not exist');
  }, 60_000);
});

describe('when a retry tier exists with compaction', () => {
  it('exits 2 naming the tier and what is wrong', async () => {
    const scenario = await createScenario(kafka, { quotas });
    const admin = kafka.admin();
    await admin.connect();
    await createTopicsWithLeaders(admin, [{ topic: `${scenario.ingress}.retry.5s`, configEntries: [{ name: 'cleanup.policy', value: 'compact' }] }]);
    await admin.disconnect();
    const sidecar = startSidecar(scenario);
    expect(await sidecar.exited).toBe(2);
    expect(sidecar.lines.join('\n')).toContain(`topic ${scenario.ingress}.retry.5s: cleanup.policy is \\"compact\\", expected \\"delete\\"`);
  }, 60_000);
});

describe('when sluice creates its retry tiers and dead-letter topic', () => {
  it('gives the tiers the broker\'s append time (their delay counts from it, whatever a writer puts in) and leaves the dead-letter topic the writer\'s', async () => {
    const scenario = await createScenario(kafka, { quotas });
    const sidecar = startSidecar(scenario);
    running.push(sidecar);
    await sidecar.joined();
    const topics = [`${scenario.ingress}.retry.5s`, `${scenario.ingress}.retry.1m`, `${scenario.ingress}.dlq`];
    const admin = kafka.admin();
    await admin.connect();
    const { resources } = await admin.describeConfigs({ includeSynonyms: false, resources: topics.map((name) => ({ type: ConfigResourceTypes.TOPIC, name, configNames: ['message.timestamp.type'] })) });
    await admin.disconnect();
    const typeOf = new Map(resources.map((r) => [r.resourceName, r.configEntries.find((e) => e.configName === 'message.timestamp.type')?.configValue]));
    expect(topics.map((t) => typeOf.get(t))).toEqual(['LogAppendTime', 'LogAppendTime', 'CreateTime']);
    expect(sidecar.lines.join('\n')).not.toContain('message.timestamp.type is');
    expect(await sidecar.stop()).toBe(0);
  }, 60_000);

  it('warns when a tier it did not create keeps the writer\'s timestamps', async () => {
    const scenario = await createScenario(kafka, { quotas });
    const admin = kafka.admin();
    await admin.connect();
    await createTopicsWithLeaders(admin, [{
      topic: `${scenario.ingress}.retry.5s`,
      // room for sluice's headers (else the check stops it), and the writer's timestamps
      configEntries: [{ name: 'max.message.bytes', value: String(2 * 1024 * 1024) }, { name: 'message.timestamp.type', value: 'CreateTime' }],
    }]);
    await admin.disconnect();
    const sidecar = startSidecar(scenario);
    running.push(sidecar);
    const warning = `topic ${scenario.ingress}.retry.5s: message.timestamp.type is CreateTime: set LogAppendTime`;
    await waitFor(() => sidecar.lines.some((l) => l.includes(warning)), { timeoutMs: 30_000, message: () => `the warning; output so far:\n${sidecar.lines.slice(-5).join('\n')}` });
    expect(await sidecar.stop()).toBe(0);
  }, 60_000);
});

describe('when a message is too large for the downstream topic', () => {
  it('dead-letters it as too-large and forwards the messages around it', async () => {
    const downstream = await createTopic(kafka, { prefix: 'small-out', configEntries: [{ name: 'max.message.bytes', value: '2000' }] });
    const scenario = await createScenario(kafka, { quotas, env: { SLUICE_DOWNSTREAM_TOPIC: downstream } });
    const producer = kafka.producer({ allowAutoTopicCreation: false });
    await producer.connect();
    await producer.send({
      topic: scenario.ingress,
      acks: -1,
      messages: [
        { value: 'before', headers: { 'producer-id': 'big' } },
        { value: `huge:${'x'.repeat(10_000)}`, headers: { 'producer-id': 'big' } },
        { value: 'after', headers: { 'producer-id': 'big' } },
      ],
    });
    await producer.disconnect();
    running.push(startSidecar(scenario));
    const forwarded = await waitForMessages(kafka, downstream, 2, { timeoutMs: 60_000 });
    expect(forwarded.map((m) => String(m.value)).sort()).toEqual(['after', 'before']);
    const dead = await waitForMessages(kafka, `${scenario.ingress}.dlq`, 1, { timeoutMs: 60_000 });
    expect(String(dead[0].value).startsWith('huge:')).toBe(true);
    expect(headerValues(dead[0].headers, 'sluice-dead-letter-reason')).toEqual(['too-large']);
  }, 120_000);
});
