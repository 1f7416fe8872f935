import fc from 'fast-check';
import { Partitioners, PartitionMetadata } from 'kafkajs';
import { decodeParkHeaders, ParkInfo } from '../../../src/park/park-headers';
import { deadLetterMessage, parkMessage, producerPartition } from '../../../src/park/park-message';
import type { HeaderList } from '../../../src/headers/header-list';

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
  const content = { key: 'k', value: Buffer.from('v'), headers: [{ key: 'a', value: '1' }, { key: 'sluice-attempt', value: '99' }, { key: 'a', value: '2' }] };
  const headersOf = (message: { headers?: unknown }): HeaderList => message.headers as HeaderList;

  it('keeps key, value and user headers, adds the park headers and stamps the current time', () => {
    const message = parkMessage(content, info, 8, 5000);
    expect(message.key).toBe('k');
    expect(message.value).toEqual(Buffer.from('v'));
    expect(message.timestamp).toBe('5000');
    expect(message.partition).toBe(producerPartition('billing', 8));
    const decoded = decodeParkHeaders(headersOf(message));
    expect(decoded).toEqual({ kind: 'valid', info, userHeaders: [{ key: 'a', value: '1' }, { key: 'a', value: '2' }] });
  });

  it('puts every message of one producer on one partition', () => {
    const partitions = new Set([1, 2, 3].map((n) => parkMessage(content, { ...info, attempt: n }, 6, n).partition));
    expect(partitions.size).toBe(1);
  });

  it('adds the dead-letter reason when dead-lettering', () => {
    const decoded = decodeParkHeaders(headersOf(deadLetterMessage(content, info, 'max-attempts', 3, 5000)));
    expect(decoded.kind === 'valid' && decoded.deadLetterReason).toBe('max-attempts');
  });
});
