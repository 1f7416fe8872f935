import fc from 'fast-check';
import { appendHeaders, findHeader, headerBytes, headerListOf, headerValues, isSluiceName, withoutSluiceHeaders, type HeaderList } from '../../../src/headers/header-list';

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

  it('counts the bytes of every name and value', () => {
    expect(headerBytes([{ key: b('ab'), value: b('cde') }, { key: 'é', value: null }, { key: b(''), value: 'x' }])).toBe(2 + 3 + 2 + 0 + 1);
  });

  it('appends sluice headers after the user\'s, never losing or reordering one (fuzz)', () => {
    fc.assert(fc.property(anyList, fc.array(fc.tuple(fc.constantFrom('sluice-a', 'sluice-b'), fc.string()), { maxLength: 3 }), (list, added) => {
      const out = appendHeaders(list, added);
      const user = withoutSluiceHeaders(list).kept;
      expect(out.slice(0, user.length)).toEqual(user);
      expect(out.slice(user.length)).toEqual(added.map(([key, value]) => ({ key, value })));
      expect(() => findHeader(out, 'producer-id')).not.toThrow();
    }));
  });
});
