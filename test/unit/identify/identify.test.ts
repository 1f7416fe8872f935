import { boundId, identify, MAX_ID_LENGTH } from '../../../src/identify/identify';

const byHeader = { source: 'header' as const, header: 'producer-id', fallback: 'unidentified' };
const byKey = { source: 'key' as const, header: 'producer-id', fallback: 'unidentified' };

describe('when the identity comes from a header', () => {
  it('reads the header value (Buffer or string, first of repeats, any case)', () => {
    expect(identify({ key: null, headers: { 'producer-id': Buffer.from('billing') } }, byHeader)).toBe('billing');
    expect(identify({ key: null, headers: { 'producer-id': ['a', 'b'] } }, byHeader)).toBe('a');
    expect(identify({ key: null, headers: { 'Producer-ID': 'x' } }, byHeader)).toBe('x');
  });

  it('uses the fallback id when the header is missing or empty', () => {
    expect(identify({ key: 'k', headers: {} }, byHeader)).toBe('unidentified');
    expect(identify({ key: 'k', headers: { 'producer-id': '' } }, byHeader)).toBe('unidentified');
    expect(identify({ key: 'k' }, byHeader)).toBe('unidentified');
  });
});

describe('when the identity comes from the key', () => {
  it('reads the key, and the fallback id when there is none', () => {
    expect(identify({ key: Buffer.from('reports') }, byKey)).toBe('reports');
    expect(identify({ key: null }, byKey)).toBe('unidentified');
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
