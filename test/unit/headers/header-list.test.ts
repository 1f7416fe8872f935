import fc from 'fast-check';
import { appendHeaders, boundId, findHeader, headerBytes, headerListOf, headerValues, identify, isSluiceName, MAX_ID_LENGTH, withoutSluiceHeaders, type HeaderList } from '../../../src/headers/header-list';

const b = (text: string): Buffer => Buffer.from(text);
const anyName = fc.oneof(
  fc.constantFrom('__proto__', 'constructor', 'toString', 'hasOwnProperty', '', 'sluice-', 'SLUICE-x', 'Sluice-Attempt', 'sluicey', 'producer-id'),
  fc.string({ maxLength: 12 }),
).map(b);
const anyBytes = fc.uint8Array({ maxLength: 16 }).map((a) => Buffer.from(a));
const anyList = fc.array(fc.record({ key: fc.oneof(anyName, anyBytes), value: fc.option(anyBytes) }), { maxLength: 40 });

describe('when a record arrives from the patched decoder', () => {
  it('hands its list as it is', () => {
    const list: HeaderList = [{ key: b('a'), value: null }];
    expect(headerListOf({ headerList: list, headers: { ignored: 'x' } })).toBe(list);
  });

  it('reads a hand-built object through its own properties only, repeated values in order', () => {
    const headers = Object.create({ inherited: 'no' }) as Record<string, unknown>;
    Object.defineProperty(headers, '__proto__', { value: 'p', enumerable: true });
    headers.a = ['1', '2'];
    headers.gone = undefined;
    expect(headerListOf({ headers: headers as never })).toEqual([{ key: '__proto__', value: 'p' }, { key: 'a', value: '1' }, { key: 'a', value: '2' }]);
    expect(headerListOf({ headers: undefined })).toEqual([]);
  });
});

describe('when sluice-* headers are dropped', () => {
  it('drops every name starting with sluice- in any case, by its bytes, and keeps the rest in order', () => {
    const list: HeaderList = [
      { key: b('a'), value: b('1') }, { key: b('SLUICE-attempt'), value: b('9') }, { key: b('__proto__'), value: null },
      { key: b('sluice-'), value: b('x') }, { key: b('sluice'), value: b('kept') }, { key: b('x-sluice-y'), value: b('kept') },
      { key: 'Sluice-Not-Before', value: '0' },
    ];
    const { kept, dropped } = withoutSluiceHeaders(list);
    expect(kept.map((h) => String(h.key))).toEqual(['a', '__proto__', 'sluice', 'x-sluice-y']);
    expect(dropped).toBe(3);
  });

  it('returns a list with nothing to drop as it is (no copy per message)', () => {
    const clean: HeaderList = [{ key: b('a'), value: b('1') }];
    expect(withoutSluiceHeaders(clean).kept).toBe(clean);
  });

  it('keeps exactly the headers whose name does not start with sluice- (fuzz, against a plain reading of the rule)', () => {
    fc.assert(fc.property(anyList, (list) => {
      const { kept, dropped } = withoutSluiceHeaders(list);
      const isSluice = (key: Buffer | string) => Buffer.from(key).subarray(0, 7).toString('latin1').toLowerCase() === 'sluice-';
      expect(kept).toEqual(list.filter((h) => !isSluice(h.key)));
      expect(dropped).toBe(list.length - kept.length);
      for (const h of list) expect(isSluiceName(h.key)).toBe(isSluice(h.key));
    }));
  });
});

describe('when headers are looked up, counted and appended', () => {
  it('finds the first value by exact name, then ignoring ASCII case; every value of a name in order', () => {
    const list: HeaderList = [{ key: b('ID'), value: b('upper') }, { key: b('id'), value: b('1') }, { key: b('x'), value: null }, { key: b('id'), value: b('2') }];
    expect(findHeader(list, 'id')).toEqual(b('1'));
    expect(findHeader(list, 'Id')).toEqual(b('upper'));
    expect(findHeader(list, 'x')).toBeNull();
    expect(findHeader(list, 'nope')).toBeUndefined();
    expect(headerValues(list, 'id')).toEqual([b('1'), b('2')]);
  });

  it('matches a name by its UTF-8 bytes exactly: a non-ASCII name, and not a key that only decodes to it (bytes not UTF-8)', () => {
    expect(findHeader([{ key: b('hé'), value: b('yes') }], 'hé')).toEqual(b('yes'));
    // 61 f0 90 80 decodes to 'a\ufffd' (a cut 4-byte sequence), as long as its UTF-8: not that name.
    expect(headerValues([{ key: Buffer.from([0x61, 0xf0, 0x90, 0x80]), value: b('forged') }, { key: b('a\ufffd'), value: b('real') }], 'a\ufffd')).toEqual([b('real')]);
    fc.assert(fc.property(fc.string({ unit: 'grapheme', maxLength: 6 }), fc.array(fc.oneof(fc.string({ unit: 'grapheme', maxLength: 6 }).map((t) => Buffer.from(t)), fc.uint8Array({ maxLength: 8 }).map((a) => Buffer.from(a))), { maxLength: 6 }), (name, keys) => {
      const list = keys.map((key, i) => ({ key, value: b(String(i)) }));
      expect(headerValues(list, name)).toEqual(list.filter((h) => h.key.equals(Buffer.from(name))).map((h) => h.value));
    }));
  });

  it('counts the bytes of every name and value', () => {
    expect(headerBytes([{ key: b('ab'), value: b('cde') }, { key: 'é', value: null }, { key: b(''), value: 'x' }])).toBe(2 + 3 + 2 + 0 + 1);
  });

  it('appends sluice headers after the user\'s, never losing or reordering one (fuzz)', () => {
    fc.assert(fc.property(anyList, fc.array(fc.tuple(fc.constantFrom('sluice-a', 'sluice-b'), fc.string()), { maxLength: 3 }), (list, added) => {
      const headers = added.map(([key, value]) => ({ key, value }));
      const out = appendHeaders(list, headers);
      const user = withoutSluiceHeaders(list).kept;
      expect(out.slice(0, user.length)).toEqual(user);
      expect(out.slice(user.length)).toEqual(headers);
      expect(() => findHeader(out, 'producer-id')).not.toThrow();
    }));
  });
});

const byHeader = { source: 'header' as const, header: 'producer-id', fallback: 'unidentified' };
const byKey = { source: 'key' as const, header: 'producer-id', fallback: 'unidentified' };
const h = (key: string | Buffer, value: string | Buffer | null) => ({ key: typeof key === 'string' ? Buffer.from(key) : key, value });

describe('when the identity comes from a header', () => {
  it('reads the header value (Buffer or string, first of repeats, any case)', () => {
    expect(identify({ key: null, headers: [h('producer-id', Buffer.from('billing'))] }, byHeader)).toBe('billing');
    expect(identify({ key: null, headers: [h('producer-id', 'a'), h('x', 'y'), h('producer-id', 'b')] }, byHeader)).toBe('a');
    expect(identify({ key: null, headers: [h('Producer-ID', 'x')] }, byHeader)).toBe('x');
    expect(identify({ key: null, headers: [{ key: 'producer-id', value: 'as a string name' }] }, byHeader)).toBe('as a string name');
  });

  it('prefers the exact name to one that differs in case', () => {
    expect(identify({ key: null, headers: [h('PRODUCER-ID', 'upper'), h('producer-id', 'exact')] }, byHeader)).toBe('exact');
  });

  it('uses the fallback id when the header is missing, empty or null', () => {
    expect(identify({ key: 'k', headers: [] }, byHeader)).toBe('unidentified');
    expect(identify({ key: 'k', headers: [h('producer-id', '')] }, byHeader)).toBe('unidentified');
    expect(identify({ key: 'k', headers: [h('producer-id', null)] }, byHeader)).toBe('unidentified');
  });

  it('is not fooled by names that are object internals or not UTF-8', () => {
    const hostile: HeaderList = [h('__proto__', 'p'), h('constructor', 'c'), h(Buffer.from([0xff, 0xfe]), 'x'), h('', 'e'), h('producer-id', 'real')];
    expect(identify({ key: null, headers: hostile }, byHeader)).toBe('real');
    expect(identify({ key: null, headers: hostile }, { ...byHeader, header: '__proto__' })).toBe('p');
  });

  it('never throws, whatever the names and values (fuzz)', () => {
    const header = fc.record({ key: fc.uint8Array({ maxLength: 12 }).map((a) => Buffer.from(a)), value: fc.option(fc.uint8Array({ maxLength: 12 }).map((a) => Buffer.from(a))) });
    fc.assert(fc.property(fc.array(header, { maxLength: 20 }), fc.string({ maxLength: 12 }), (headers, name) => {
      const id = identify({ key: null, headers }, { ...byHeader, header: name });
      expect(typeof id).toBe('string');
      expect(id.length).toBeLessThanOrEqual(MAX_ID_LENGTH);
    }));
  });
});

describe('when the identity comes from the key', () => {
  it('reads the key, and the fallback id when there is none', () => {
    expect(identify({ key: Buffer.from('reports'), headers: [] }, byKey)).toBe('reports');
    expect(identify({ key: null, headers: [] }, byKey)).toBe('unidentified');
  });
});

describe('when an id is very long', () => {
  it('bounds it and keeps two long ids with a common prefix distinct', () => {
    const a = boundId('p'.repeat(5000) + 'a');
    const b = boundId('p'.repeat(5000) + 'b');
    expect(a.length).toBeLessThanOrEqual(MAX_ID_LENGTH);
    expect(a).not.toBe(b);
    expect(boundId('short{id}')).toBe('short{id}');
  });
});
