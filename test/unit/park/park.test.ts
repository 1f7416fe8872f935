import fc from 'fast-check';
import { Partitioners, PartitionMetadata } from 'kafkajs';
import type { Header, HeaderList } from '../../../src/headers/header-list';
import {
  buildTiers,
  chooseTier,
  deadLetterMessage,
  decodeParkHeaders,
  encodeParkHeaders,
  forwardHeaders,
  H,
  ParkInfo,
  parkMessage,
  producerPartition,
  tierAtMost,
  tierDueAt,
  tierOfTopic,
  waitedHeader,
  withSluiceHeaders,
} from '../../../src/park/park';

describe('when tiers are built from the config', () => {
  const tiers = buildTiers('orders.retry', [3_600_000, 5000, 60_000, 600_000, 5000]);

  it('names one topic per delay, in ascending order, without duplicates', () => {
    expect(tiers.map((t) => t.topic)).toEqual(['orders.retry.5s', 'orders.retry.1m', 'orders.retry.10m', 'orders.retry.1h']);
  });

  it('refuses an empty list and non-positive delays', () => {
    expect(() => buildTiers('r', [])).toThrow('retry.tiers: expected at least one delay');
    expect(() => buildTiers('r', [0])).toThrow('retry.tiers: expected positive whole milliseconds, got 0');
  });

  it('chooses the largest tier not longer than the wait', () => {
    expect(chooseTier(tiers, 59_999).label).toBe('5s');
    expect(chooseTier(tiers, 60_000).label).toBe('1m');
    expect(chooseTier(tiers, 7_200_000).label).toBe('1h');
  });

  it('chooses the smallest tier when the wait is shorter than every tier', () => {
    expect(chooseTier(tiers, 100).label).toBe('5s');
    expect(tierAtMost(tiers, 100)).toBeUndefined();
    expect(tierAtMost(tiers, 700_000)?.label).toBe('10m');
  });

  it('makes a tier message due its delay after its timestamp', () => {
    expect(tierDueAt(tiers[1], 1000)).toBe(61_000);
    expect(tierOfTopic(tiers, 'orders.retry.10m')?.delayMs).toBe(600_000);
    expect(tierOfTopic(tiers, 'orders')).toBeUndefined();
  });
});

const info: ParkInfo = {
  producer: 'billing',
  attempt: 2,
  notBefore: 1_700_000_005_000,
  firstSeen: 1_700_000_000_000,
  timestamp: '1699999999000',
  origin: { topic: 'orders', partition: 3, offset: '42' },
  reason: { kind: 'overflow', limit: '1000/h' },
};

/** A header list of names and values as text (string names: as sluice writes them). */
const list = (...pairs: [string, string | null][]): HeaderList => pairs.map(([key, value]) => ({ key, value }));
/** The same, as the decoder gives it: names and values as bytes. */
const wire = (headers: HeaderList): HeaderList =>
  headers.map(({ key, value }) => ({ key: Buffer.from(key), value: value === null ? null : Buffer.from(value) }));
const names = (headers: HeaderList): string[] => headers.map((h) => String(h.key));

describe('when a parked message is encoded and read back', () => {
  it('gives back the same park info and the user headers in order with repeated and interleaved names', () => {
    const user = list(['z', 'last-alpha'], ['a', '1'], ['m', 'bin'], ['a', '2'], ['__proto__', 'p'], ['', null]);
    const headers = withSluiceHeaders(user, encodeParkHeaders(info));
    expect(names(headers).slice(0, 6)).toEqual(['z', 'a', 'm', 'a', '__proto__', '']);
    const decoded = decodeParkHeaders(wire(headers));
    if (decoded.kind !== 'valid') throw new Error(JSON.stringify(decoded));
    expect(decoded.info).toEqual(info);
    expect(decoded.userHeaders).toEqual(wire(user));
    expect(decoded.deadLetterReason).toBeUndefined();
  });

  it('round-trips every reason kind', () => {
    for (const reason of [{ kind: 'delayed' }, { kind: 'store-unavailable' }, { kind: 'overflow', limit: 'rate' }] as const) {
      const decoded = decodeParkHeaders(list(...encodeParkHeaders({ ...info, reason })));
      expect(decoded.kind === 'valid' && decoded.info.reason).toEqual(reason);
    }
  });

  it('round-trips arbitrary producers, instants and origins', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1 }),
        fc.integer({ min: 1, max: 1000 }),
        fc.nat(),
        fc.nat(),
        fc.stringMatching(/^[a-zA-Z0-9._-]{1,40}$/),
        fc.nat(1000),
        (producer, attempt, notBefore, firstSeen, topic, partition) => {
          const value = { ...info, producer, attempt, notBefore, firstSeen, origin: { topic, partition, offset: '7' } };
          const decoded = decodeParkHeaders(list(...encodeParkHeaders(value)));
          return decoded.kind === 'valid' && JSON.stringify(decoded.info) === JSON.stringify(value);
        },
      ),
    );
  });

  it('reads the dead-letter reason when present, unreadable and its error included', () => {
    const decoded = decodeParkHeaders(list(...encodeParkHeaders(info), [H.deadLetterReason, 'max-age']));
    expect(decoded.kind === 'valid' && decoded.deadLetterReason).toBe('max-age');
    const unreadable = decodeParkHeaders(wire(list(...encodeParkHeaders({ ...info, error: 'TypeError: boom' }), [H.deadLetterReason, 'unreadable'])));
    expect(unreadable).toMatchObject({ kind: 'valid', deadLetterReason: 'unreadable', info: { ...info, error: 'TypeError: boom' } });
  });
});

describe('when the sluice headers are malformed', () => {
  /** The park headers of `info` with `name` replaced by `values` (none: removed). */
  const changed = (name: string, ...values: (string | null)[]): HeaderList => {
    const out: Header[] = [...list(['u', 'kept'])];
    for (const [key, value] of encodeParkHeaders(info)) {
      if (key !== name) out.push({ key, value });
      else if (values.length > 0) for (const v of values) out.push({ key, value: v });
    }
    if (!encodeParkHeaders(info).some(([key]) => key === name)) for (const v of values) out.push({ key: name, value: v });
    return out;
  };
  const cases: Array<[string, HeaderList, string]> = [
    ['attempt is missing', changed(H.attempt), 'sluice-attempt: missing'],
    ['attempt is zero', changed(H.attempt, '0'), 'sluice-attempt: unreadable value "0"'],
    ['attempt is null', changed(H.attempt, null), 'sluice-attempt: unreadable value ""'],
    ['not-before is not a number', changed(H.notBefore, 'soon'), 'sluice-not-before: unreadable value "soon"'],
    ['not-before is repeated', changed(H.notBefore, '1', '2'), 'sluice-not-before: repeated 2 times'],
    ['reason is unknown', changed(H.reason, 'because'), 'sluice-reason: unreadable value "because"'],
    ['overflow names no limit', changed(H.reason, 'overflow:'), 'sluice-reason: unreadable value "overflow:"'],
    ['origin has no offset', changed(H.origin, 'orders/1'), 'sluice-origin: unreadable value "orders/1"'],
    ['producer is empty', changed(H.producer, ''), 'sluice-producer: unreadable value ""'],
    ['dead-letter reason is unknown', changed(H.deadLetterReason, 'bored'), 'sluice-dead-letter-reason: unreadable value "bored"'],
  ];

  it.each(cases)('returns malformed when %s, naming the header, and keeps what parsed', (_name, headers, problem) => {
    const decoded = decodeParkHeaders(wire(headers));
    expect(decoded.kind).toBe('malformed');
    if (decoded.kind !== 'malformed') return;
    expect(decoded.problems).toEqual([problem]);
    expect(decoded.userHeaders).toEqual(wire(list(['u', 'kept'])));
    expect(decoded.partial.firstSeen).toBe(info.firstSeen);
  });

  it('never throws on arbitrary header values', () => {
    const value = fc.option(fc.oneof(fc.string(), fc.uint8Array().map((a) => Buffer.from(a))));
    const key = fc.oneof(fc.constantFrom(...Object.values(H), 'other', '__proto__', 'SLUICE-ATTEMPT'), fc.uint8Array({ maxLength: 10 }).map((a) => Buffer.from(a)));
    fc.assert(
      fc.property(fc.array(fc.record({ key, value }), { maxLength: 30 }), (headers) => {
        const decoded = decodeParkHeaders(headers);
        return decoded.kind === 'valid' || decoded.problems.length > 0;
      }),
    );
  });

  it('reports every header as missing when there are none', () => {
    const decoded = decodeParkHeaders([]);
    expect(decoded.kind === 'malformed' && decoded.problems.length).toBe(7);
  });
});

describe('when a message is forwarded', () => {
  const asText = (headers: HeaderList): [string, string | null][] =>
    headers.map((h) => [h.key.toString(), h.value === null ? null : h.value.toString()]);

  it('keeps the user headers and adds waited-ms and, after a retry, the attempt', () => {
    expect(asText(forwardHeaders(list(['a', '1'], ['sluice-reason', 'delayed'], ['a', '2']), 1234.4, 3))).toEqual(
      [['a', '1'], ['a', '2'], ['sluice-waited-ms', '1234'], ['sluice-attempt', '3']],
    );
    expect(asText(forwardHeaders([], -5))).toEqual([['sluice-waited-ms', '0']]);
  });

  it('writes the headers it adds as bytes, so a list of the decoder\'s Buffers stays Buffers only', () => {
    const added = forwardHeaders([], 7, 2);
    expect(added.every((h) => Buffer.isBuffer(h.key) && Buffer.isBuffer(h.value))).toBe(true);
  });

  it('writes any wait as its whole milliseconds, never negative, shared or not', () => {
    fc.assert(
      fc.property(fc.oneof(fc.double({ min: -1e6, max: 1e12, noNaN: true }), fc.integer({ min: -5, max: 2000 })), (ms) => {
        const { key, value } = waitedHeader(ms);
        expect(key.toString()).toBe('sluice-waited-ms');
        expect(String(value)).toBe(String(Math.max(0, Math.round(ms))));
      }),
    );
  });

  it('shares the value of a wait under a second between messages, and makes a longer one afresh', () => {
    expect(waitedHeader(12)).toBe(waitedHeader(12.2));
    expect(waitedHeader(-3)).toBe(waitedHeader(0));
    expect(waitedHeader(1500).value).not.toBe(waitedHeader(1500).value);
  });
});

const parked: ParkInfo = {
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
    const message = parkMessage(content, parked, 8, 5000);
    expect(message.key).toBe('k');
    expect(message.value).toEqual(Buffer.from('v'));
    expect(message.timestamp).toBe('5000');
    expect(message.partition).toBe(producerPartition('billing', 8));
    const decoded = decodeParkHeaders(headersOf(message));
    expect(decoded).toEqual({ kind: 'valid', info: parked, userHeaders: [{ key: 'a', value: '1' }, { key: 'a', value: '2' }] });
  });

  it('puts every message of one producer on one partition', () => {
    const partitions = new Set([1, 2, 3].map((n) => parkMessage(content, { ...parked, attempt: n }, 6, n).partition));
    expect(partitions.size).toBe(1);
  });

  it('adds the dead-letter reason when dead-lettering', () => {
    const decoded = decodeParkHeaders(headersOf(deadLetterMessage(content, parked, 'max-attempts', 3, 5000)));
    expect(decoded.kind === 'valid' && decoded.deadLetterReason).toBe('max-attempts');
  });
});
