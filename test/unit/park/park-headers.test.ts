import fc from 'fast-check';
import {
  decodeParkHeaders,
  encodeParkHeaders,
  forwardHeaders,
  H,
  ParkInfo,
  stripSluiceHeaders,
  withSluiceHeaders,
} from '../../../src/park/park-headers';

const info: ParkInfo = {
  producer: 'billing',
  attempt: 2,
  notBefore: 1_700_000_005_000,
  firstSeen: 1_700_000_000_000,
  timestamp: '1699999999000',
  origin: { topic: 'orders', partition: 3, offset: '42' },
  reason: { kind: 'overflow', limit: '1000/h' },
};

const asBuffers = (headers: Record<string, string | string[]>) =>
  Object.fromEntries(
    Object.entries(headers).map(([k, v]) => [k, Array.isArray(v) ? v.map((x) => Buffer.from(x)) : Buffer.from(v)]),
  );

describe('when ingress strips forged sluice headers', () => {
  it('drops every sluice-* header in any case and counts each value', () => {
    const { headers, dropped } = stripSluiceHeaders({
      a: '1',
      'sluice-attempt': '9',
      'Sluice-Not-Before': ['0', '1'],
      b: ['x', 'y'],
    });
    expect(headers).toEqual({ a: '1', b: ['x', 'y'] });
    expect(Object.keys(headers)).toEqual(['a', 'b']);
    expect(dropped).toBe(3);
  });

  it('accepts missing headers', () => {
    expect(stripSluiceHeaders(undefined)).toEqual({ headers: {}, dropped: 0 });
  });

  it('hands headers with nothing to drop back as they are (no copy per message), and copies otherwise', () => {
    const clean = { a: '1', 'x-sluice-note': '2', sluice: '3' };
    expect(stripSluiceHeaders(clean).headers).toBe(clean);
    const forged = { a: '1', 'SLUICE-x': '2' };
    const stripped = stripSluiceHeaders(forged);
    expect(stripped.headers).not.toBe(forged);
    expect(stripped).toEqual({ headers: { a: '1' }, dropped: 1 });
    expect(forged).toEqual({ a: '1', 'SLUICE-x': '2' });
  });
});

describe('when a parked message is encoded and read back', () => {
  it('gives back the same park info and the user headers in order with repeated keys', () => {
    const user = { z: 'last-alpha', a: ['1', '2'], m: Buffer.from('bin') };
    const headers = withSluiceHeaders(user, encodeParkHeaders(info));
    expect(Object.keys(headers).slice(0, 3)).toEqual(['z', 'a', 'm']);
    const decoded = decodeParkHeaders(asBuffers(headers as Record<string, string>));
    if (decoded.kind !== 'valid') throw new Error(JSON.stringify(decoded));
    expect(decoded.info).toEqual(info);
    expect(Object.keys(decoded.userHeaders)).toEqual(['z', 'a', 'm']);
    expect(decoded.deadLetterReason).toBeUndefined();
  });

  it('round-trips every reason kind', () => {
    for (const reason of [{ kind: 'delayed' }, { kind: 'store-unavailable' }, { kind: 'overflow', limit: 'rate' }] as const) {
      const decoded = decodeParkHeaders(encodeParkHeaders({ ...info, reason }));
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
          const decoded = decodeParkHeaders(encodeParkHeaders(value));
          return decoded.kind === 'valid' && JSON.stringify(decoded.info) === JSON.stringify(value);
        },
      ),
    );
  });

  it('reads the dead-letter reason when present', () => {
    const decoded = decodeParkHeaders({ ...encodeParkHeaders(info), [H.deadLetterReason]: 'max-age' });
    expect(decoded.kind === 'valid' && decoded.deadLetterReason).toBe('max-age');
  });
});

describe('when the sluice headers are malformed', () => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['attempt is missing', { [H.attempt]: undefined }, 'sluice-attempt: missing'],
    ['attempt is zero', { [H.attempt]: '0' }, 'sluice-attempt: unreadable value "0"'],
    ['not-before is not a number', { [H.notBefore]: 'soon' }, 'sluice-not-before: unreadable value "soon"'],
    ['not-before is repeated', { [H.notBefore]: ['1', '2'] }, 'sluice-not-before: repeated 2 times'],
    ['reason is unknown', { [H.reason]: 'because' }, 'sluice-reason: unreadable value "because"'],
    ['overflow names no limit', { [H.reason]: 'overflow:' }, 'sluice-reason: unreadable value "overflow:"'],
    ['origin has no offset', { [H.origin]: 'orders/1' }, 'sluice-origin: unreadable value "orders/1"'],
    ['producer is empty', { [H.producer]: '' }, 'sluice-producer: unreadable value ""'],
    ['dead-letter reason is unknown', { [H.deadLetterReason]: 'bored' }, 'sluice-dead-letter-reason: unreadable value "bored"'],
  ];

  it.each(cases)('returns malformed when %s, naming the header, and keeps what parsed', (_name, change, problem) => {
    const decoded = decodeParkHeaders({ u: 'kept', ...encodeParkHeaders(info), ...change } as never);
    expect(decoded.kind).toBe('malformed');
    if (decoded.kind !== 'malformed') return;
    expect(decoded.problems).toEqual([problem]);
    expect(decoded.userHeaders).toEqual({ u: 'kept' });
    expect(decoded.partial.firstSeen).toBe(info.firstSeen);
  });

  it('never throws on arbitrary header values', () => {
    const value = fc.oneof(fc.string(), fc.uint8Array().map((a) => Buffer.from(a)), fc.array(fc.string(), { maxLength: 3 }));
    const keys = fc.constantFrom(...Object.values(H), 'other');
    fc.assert(
      fc.property(fc.dictionary(keys, value), (headers) => {
        const decoded = decodeParkHeaders(headers);
        return decoded.kind === 'valid' || decoded.problems.length > 0;
      }),
    );
  });

  it('reports every header as missing when there are none', () => {
    const decoded = decodeParkHeaders(undefined);
    expect(decoded.kind === 'malformed' && decoded.problems.length).toBe(7);
  });
});

describe('when a message is forwarded', () => {
  it('keeps the user headers and adds waited-ms and, after a retry, the attempt', () => {
    expect(forwardHeaders({ a: '1', 'sluice-reason': 'delayed' }, 1234.4, 3)).toEqual({
      a: '1',
      'sluice-waited-ms': '1234',
      'sluice-attempt': '3',
    });
    expect(forwardHeaders({}, -5)).toEqual({ 'sluice-waited-ms': '0' });
  });
});
