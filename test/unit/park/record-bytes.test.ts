/**
 * A record read from ingress keeps its bytes (src/park/record-bytes.ts) and is written by copying
 * them: whatever its key, value and headers, what sluice writes of it — downstream, to a retry
 * tier, to the dead-letter topic — encodes to the very bytes it would without them. kafkajs's own
 * encoder and (patched) decoder, as the consumer and the producer use them.
 */
/* eslint-disable @typescript-eslint/no-require-imports */
import fc from 'fast-check';
import type { KafkaMessage, Message } from 'kafkajs';
import { fromIngress } from '../../../src/flow/flow-item';
import type { HeaderList } from '../../../src/headers/header-list';
import { createMessageWriter, type Sender } from '../../../src/produce/batch-sender';
import { recordBytesOf } from '../../../src/park/record-bytes';

const Decoder = require('kafkajs/src/protocol/decoder') as new (buffer: Buffer) => { readVarIntBytes(): Buffer };
const encodeRecord = require('kafkajs/src/protocol/recordBatch/record/v0') as (r: object) => { buffer: Buffer };
const decodeRecord = require('kafkajs/src/protocol/recordBatch/record/v0/decoder') as (d: unknown, context: object) => KafkaMessage;

/** A record as the consumer hands it: written by kafkajs, read back by the patched decoder. */
const fetched = (key: Buffer | null, value: Buffer | null, headers: HeaderList): KafkaMessage => {
  const outer = new Decoder(encodeRecord({ key, value, headers, offsetDelta: 3, timestampDelta: 5 }).buffer);
  return decodeRecord(new Decoder(outer.readVarIntBytes()), { firstOffset: '100', firstTimestamp: '1700000000000' });
};

const identity = { source: 'header' as const, header: 'producer-id', fallback: 'unknown' };
const ingress = (message: KafkaMessage) => fromIngress(message, { topic: 'in', partition: 0 }, identity, 1_000, { count: 0 });

const recording = () => {
  const sent: Message[] = [];
  const sender: Sender = {
    send: async (_topic, message) => void sent.push(message),
    sendAll: async (_topic, messages) => {
      sent.push(...messages);
      return [];
    },
    flush: async () => undefined,
    pending: () => 0,
    failing: () => [],
    close: () => undefined,
  };
  const writer = createMessageWriter({
    sender,
    clock: { now: () => 2_000 },
    topics: { downstream: 'down', deadLetter: 'dlq', tiers: [{ topic: 'retry-5s', delayMs: 5_000, label: '5s' }], partitions: new Map([['down', 3], ['retry-5s', 2], ['dlq', 1]]) },
  });
  return { sent, writer };
};

/** The record kafkajs writes for a message, and for the same message without the record's bytes. */
const bothWays = (message: Message): [Buffer, Buffer] => {
  const at = { offsetDelta: 7, timestampDelta: 11 };
  return [encodeRecord({ ...message, ...at }).buffer, encodeRecord({ ...message, record: undefined, ...at }).buffer];
};

const bytes = fc.uint8Array({ maxLength: 30 }).map((a) => Buffer.from(a));
/** Any name but a `sluice-*` one (those are dropped on ingress: the record is then not whole). */
const userName = fc.oneof(bytes, fc.string({ maxLength: 12 }).map((s) => Buffer.from(s))).filter((name) => !name.toString('latin1').toLowerCase().startsWith('sluice-'));
const header = fc.record({ key: userName, value: fc.oneof(bytes, fc.constant(null)) });

describe('a record read from ingress, written', () => {
  it('encodes to the same bytes copied as encoded again, downstream, to a tier and to the dead-letter topic', async () => {
    await fc.assert(fc.asyncProperty(fc.option(bytes), fc.option(bytes), fc.array(header, { maxLength: 12 }), fc.nat(5_000), async (key, value, headers, waitedMs) => {
      const item = ingress(fetched(key, value, headers));
      expect(item.content.record).toBeDefined();
      const { sent, writer } = recording();
      await writer.forwardAll([{ content: item.content, timestamp: item.info.timestamp, waitedMs, size: item.size }]);
      await writer.forward(item.content, { timestamp: item.info.timestamp, waitedMs, attempt: 2 });
      await writer.park(item.content, { ...item.info, attempt: 1, notBefore: 7_000 });
      await writer.deadLetter(item.content, { ...item.info, attempt: 3 }, 'max-attempts');
      expect(sent).toHaveLength(4);
      for (const message of sent) {
        expect((message as Message & { record?: unknown }).record).toBe(item.content.record);
        const [copied, encoded] = bothWays(message);
        expect(copied.equals(encoded)).toBe(true);
      }
    }), { numRuns: 200 });
  });

  it('keeps no bytes of a record whose sluice-* headers were dropped, nor of a message built by hand', () => {
    const forged = ingress(fetched(null, Buffer.from('v'), [{ key: Buffer.from('a'), value: Buffer.from('1') }, { key: Buffer.from('Sluice-Attempt'), value: Buffer.from('9') }]));
    expect(forged.content.headers.map((h) => String(h.key))).toEqual(['a']);
    expect(forged.content.record).toBeUndefined();
    const byHand = { key: null, value: Buffer.from('v'), headers: { a: '1' }, timestamp: '1', attributes: 0, offset: '0' } as unknown as KafkaMessage;
    expect(recordBytesOf(byHand)).toBeUndefined();
    expect(ingress(byHand).content.record).toBeUndefined();
  });
});
