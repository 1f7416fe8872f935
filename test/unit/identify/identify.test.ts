import fc from 'fast-check';
import { boundId, identify, MAX_ID_LENGTH } from '../../../src/identify/identify';
import type { HeaderList } from '../../../src/headers/header-list';

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
