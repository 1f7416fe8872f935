import fc from 'fast-check';
import {
  decodeParkHeaders,
  encodeParkHeaders,
  forwardHeaders,
  H,
  ParkInfo,
  withSluiceHeaders,
} from '../../../src/park/park-headers';
import type { Header, HeaderList } from '../../../src/headers/header-list';

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
  it('keeps the user headers and adds waited-ms and, after a retry, the attempt', () => {
    expect(forwardHeaders(list(['a', '1'], ['sluice-reason', 'delayed'], ['a', '2']), 1234.4, 3)).toEqual(
      list(['a', '1'], ['a', '2'], ['sluice-waited-ms', '1234'], ['sluice-attempt', '3']),
    );
    expect(forwardHeaders([], -5)).toEqual(list(['sluice-waited-ms', '0']));
  });
});
