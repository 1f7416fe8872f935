import { Kafka } from 'kafkajs';
import pino from 'pino';
import { syntheticBatch, warmUp } from '../../../src/app/warm-up';
import { loadConfig } from '../../../src/config/load-config';
import { identify } from '../../../src/headers/header-list';

const topics = { SLUICE_INGRESS_TOPIC: 'orders', SLUICE_DOWNSTREAM_TOPIC: 'orders.out' };
const configOf = (env: Record<string, string> = {}) => loadConfig({ env: { ...topics, ...env } });
// Never connected: the warm-up builds a flow on it but starts no consumer.
const kafka = new Kafka({ brokers: ['127.0.0.1:1'], logLevel: 0 });
const partitions = (config: ReturnType<typeof configOf>) =>
  new Map([[config.topics.ingress, 8], [config.topics.downstream, 3], [config.topics.deadLetter, 1], ...config.retry.tiers.map((t) => [t.topic, 1] as [string, number])]);

describe('syntheticBatch', () => {
  it.each([['header', { SLUICE_IDENTITY_SOURCE: 'header', SLUICE_IDENTITY_HEADER: 'tenant' }], ['key', { SLUICE_IDENTITY_SOURCE: 'key' }]])(
    'is what kafkajs decodes: consecutive offsets from the one asked, each message identified as one of 100 producers (identity from the %s)',
    async (_source, env) => {
      const config = configOf(env);
      const batch = await syntheticBatch(config, { topic: 'orders', partition: 3, offset: 1000, count: 250 });
      expect(batch.topic).toBe('orders');
      expect(batch.partition).toBe(3);
      expect(batch.messages.map((m) => Number(m.offset))).toEqual(Array.from({ length: 250 }, (_, i) => 1000 + i));
      expect(batch.lastOffset()).toBe('1249');
      const ids = batch.messages.map((m) => identify({ key: m.key, headers: (m as unknown as { headerList: never }).headerList }, config.identity));
      expect(new Set(ids).size).toBe(100);
      expect(ids.every((id) => /^warm-up-\d+$/.test(id))).toBe(true);
    },
  );
});

describe('warmUp', () => {
  const logger = pino({ level: 'silent' });

  it('takes the messages asked, in batches, and writes every one downstream', async () => {
    const config = configOf();
    const done = await warmUp(config, { kafka, logger, partitions: partitions(config) }, { messages: 3000, maxMs: 60_000, batch: 400 });
    expect(done.messages).toBe(3000);
    expect(done.written).toBe(3000);
  });

  it('stops at its time bound, the batch under way finished (the first one always taken)', async () => {
    const config = configOf();
    const done = await warmUp(config, { kafka, logger, partitions: partitions(config) }, { messages: 10_000_000, maxMs: 1, batch: 200 });
    expect(done.messages).toBe(200);
    expect(done.written).toBe(done.messages);
  });

  it('does nothing when asked for no message', async () => {
    const config = configOf();
    expect(await warmUp(config, { kafka, logger, partitions: partitions(config) }, { messages: 0, maxMs: 1000, batch: 100 })).toEqual({ messages: 0, written: 0, ms: 0 });
  });

  it('logs a failure and resolves (the sidecar starts without it)', async () => {
    const config = configOf();
    const lines: string[] = [];
    const recording = pino({ level: 'warn' }, { write: (l: string) => void lines.push(l) });
    const done = await warmUp(config, { kafka, logger: recording, partitions: new Map() }, { messages: 1000, maxMs: 10_000, batch: 100 });
    expect(done.written).toBe(0);
    expect(lines.join('')).toContain('the warm-up failed; starting without it');
  });
});
