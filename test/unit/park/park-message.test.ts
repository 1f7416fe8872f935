import fc from 'fast-check';
import { Partitioners, PartitionMetadata } from 'kafkajs';
import { decodeParkHeaders, ParkInfo } from '../../../src/park/park-headers';
import { deadLetterMessage, parkMessage, producerPartition } from '../../../src/park/park-message';

const info: ParkInfo = {
  producer: 'billing',
  attempt: 1,
  notBefore: 2000,
  firstSeen: 1000,
  timestamp: '900',
  origin: { topic: 'orders', partition: 0, offset: '5' },
  reason: { kind: 'delayed' },
};

const metadata = (n: number): PartitionMetadata[] =>
  Array.from({ length: n }, (_, partitionId) => ({ partitionId, partitionErrorCode: 0, leader: 1, replicas: [1], isr: [1] }));

describe('when a partition is chosen for a producer', () => {
  it('picks what kafkajs default (Java-compatible) partitioner picks for that key', () => {
    const kafkajs = Partitioners.DefaultPartitioner();
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 30 }), fc.integer({ min: 1, max: 64 }), (producer, n) => {
        const expected = kafkajs({ topic: 't', partitionMetadata: metadata(n), message: { key: producer, value: null } });
        return producerPartition(producer, n) === expected;
      }),
      { numRuns: 500 },
    );
  });

  it('refuses a topic without partitions', () => {
    expect(() => producerPartition('p', 0)).toThrow('at least one partition, got 0');
  });
});

describe('when a message is parked', () => {
  const content = { key: 'k', value: Buffer.from('v'), headers: { a: ['1', '2'], 'sluice-attempt': '99' } };

  it('keeps key, value and user headers, adds the park headers and stamps the current time', () => {
    const message = parkMessage(content, info, 8, 5000);
    expect(message.key).toBe('k');
    expect(message.value).toEqual(Buffer.from('v'));
    expect(message.timestamp).toBe('5000');
    expect(message.partition).toBe(producerPartition('billing', 8));
    const decoded = decodeParkHeaders(message.headers);
    expect(decoded).toEqual({ kind: 'valid', info, userHeaders: { a: ['1', '2'] } });
  });

  it('puts every message of one producer on one partition', () => {
    const partitions = new Set([1, 2, 3].map((n) => parkMessage(content, { ...info, attempt: n }, 6, n).partition));
    expect(partitions.size).toBe(1);
  });

  it('adds the dead-letter reason when dead-lettering', () => {
    const decoded = decodeParkHeaders(deadLetterMessage(content, info, 'max-attempts', 3, 5000).headers);
    expect(decoded.kind === 'valid' && decoded.deadLetterReason).toBe('max-attempts');
  });
});
