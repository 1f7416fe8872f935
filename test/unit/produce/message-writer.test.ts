/**
 * Every downstream message names its partition (the sender keeps a request to one partition),
 * the very partition kafkajs's default partitioner would have picked for a keyed message.
 */
import { Partitioners, type Message } from 'kafkajs';
import { headerBytes, type HeaderList } from '../../../src/headers/header-list';
import { messageBytes } from '../../../src/produce/batch-split';
import { createMessageWriter, type Sender } from '../../../src/produce/batch-sender';

const recordingSender = () => {
  const sent: { topic: string; message: Message }[] = [];
  const estimates: number[] = [];
  const sender: Sender = {
    send: async (topic, message) => (sent.push({ topic, message }), { appendedAt: undefined, slow: false }),
    sendAll: async (topic, messages, bytes) => {
      for (const message of messages) sent.push({ topic, message });
      estimates.push(...(bytes ?? []));
      return { errors: [], slow: false };
    },
    flush: async () => undefined,
    pending: () => 0,
    failing: () => [],
    close: () => undefined,
  };
  return { sent, sender, estimates };
};

/** A written message's headers as text (sluice writes the names and values it adds as bytes). */
const textOf = (m: Message): [string, string | null][] =>
  (m.headers as unknown as HeaderList).map((h) => [h.key.toString(), h.value === null ? null : h.value.toString()]);

const writerWith = (sender: Sender, downstreamPartitions: number) =>
  createMessageWriter({
    sender,
    clock: { now: () => 1_000 },
    topics: { downstream: 'down', deadLetter: 'dlq', tiers: [], partitions: new Map([['down', downstreamPartitions], ['dlq', 1]]) },
  });

describe('when a message is forwarded downstream', () => {
  it('names the partition kafkajs\'s default partitioner picks for its key', async () => {
    const { sent, sender } = recordingSender();
    const writer = writerWith(sender, 7);
    const keys = Array.from({ length: 200 }, (_, i) => (i % 2 === 0 ? `producer-${i}` : Buffer.from(`bytes-${i}`)));
    for (const key of keys) await writer.forward({ key, value: 'v', headers: [] }, { timestamp: '1', waitedMs: 0 });
    const kafkajs = Partitioners.DefaultPartitioner();
    const partitionMetadata = Array.from({ length: 7 }, (_, partitionId) => ({ partitionId, leader: 0, replicas: [0], isr: [0], partitionErrorCode: 0 }));
    expect(sent.map((s) => s.message.partition)).toEqual(keys.map((key) => kafkajs({ topic: 'down', partitionMetadata, message: { key, value: 'v' } })));
    expect(new Set(sent.map((s) => s.message.partition)).size).toBe(7);
  });

  it('spreads messages without a key over every partition in turn', async () => {
    const { sent, sender } = recordingSender();
    const writer = writerWith(sender, 3);
    for (let i = 0; i < 6; i += 1) await writer.forward({ key: null, value: String(i), headers: [] }, { timestamp: '1', waitedMs: 0 });
    const partitions = sent.map((s) => s.message.partition as number);
    expect([...partitions.slice(0, 3)].sort()).toEqual([0, 1, 2]);
    expect(partitions.slice(3)).toEqual(partitions.slice(0, 3));
  });

  it('forwards several at once the same way, in order, each with its waited time and no attempt', async () => {
    const one = recordingSender();
    const all = recordingSender();
    const contents = ['a', 'b', null, 'cé'].map((key, i) => ({ key, value: `v${i}`, headers: i === 1 ? [{ key: 'h', value: '1' }, { key: 'hé', value: 'y' }, { key: 'h', value: 'x' }] : [{ key: 'h', value: String(i) }] }));
    for (const content of contents) await writerWith(one.sender, 5).forward(content, { timestamp: '7', waitedMs: 3 });
    const sizes = contents.map((c) => Buffer.byteLength(c.key ?? '') + c.value.length + headerBytes(c.headers));
    await writerWith(all.sender, 5).forwardAll(contents.map((content, i) => ({ content, info: { timestamp: '7', firstSeen: 1000 }, size: sizes[i] })), 2234);
    const waited3 = (m: Message) => textOf(m).map(([key, value]) => [key, key === 'sluice-waited-ms' ? '3' : value]);
    const comparable = (sent: { topic: string; message: Message }[]) => sent.map((s) => ({ ...s, message: { ...s.message, headers: waited3(s.message) } }));
    expect(comparable(all.sent)).toEqual(comparable(one.sent));
    expect(textOf(one.sent[0].message)).toEqual([['h', '0'], ['sluice-waited-ms', '3']]);
    expect(textOf(all.sent[0].message)).toEqual([['h', '0'], ['sluice-waited-ms', '1234']]);
    expect(textOf(all.sent[1].message).map(([key]) => key)).toEqual(['h', 'hé', 'h', 'sluice-waited-ms']);
    // The size it tells the sender is the one the sender would measure (no header measured twice).
    expect(all.estimates).toEqual(all.sent.map((s) => messageBytes(s.message)));
  });

  it('drops a sluice-* header that reached a forward all the same (any case), keeping the rest in order', async () => {
    const all = recordingSender();
    const headers = [{ key: 'a', value: '1' }, { key: Buffer.from('Sluice-Waited-Ms'), value: '0' }, { key: 'b', value: '2' }, { key: 'sluice-x', value: null }];
    await writerWith(all.sender, 1).forwardAll([{ content: { key: null, value: 'v', headers }, info: { timestamp: '7', firstSeen: 100 }, size: 10 }], 105);
    expect(textOf(all.sent[0].message)).toEqual([['a', '1'], ['b', '2'], ['sluice-waited-ms', '5']]);
  });

  it('refuses to start without the downstream topic\'s partition count', () => {
    const { sender } = recordingSender();
    expect(() => createMessageWriter({ sender, clock: { now: () => 0 }, topics: { downstream: 'down', deadLetter: 'dlq', tiers: [], partitions: new Map() } })).toThrow(/no partition count known for topic down/);
  });
});
