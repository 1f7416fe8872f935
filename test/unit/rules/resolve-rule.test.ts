import fc from 'fast-check';
import { literalLength } from '../../../src/rules/glob';
import { parseQuotas } from '../../../src/rules/parse-quotas';
import { RESOLVE_CACHE_SIZE, resolveRule } from '../../../src/rules/rule-index';
import { globRegexOracle } from './glob-oracle';

const rules = parseQuotas(
  [
    'default: { rate: 100/s }',
    'producers:',
    '  "team-*": { rate: 1/s }',
    '  "team-a.*": { rate: 2/s }',
    '  "*-eu": { rate: 3/s }',
    '  "x*y*": { rate: 4/s }',
    '  "team-a.billing": { rate: 5/s }',
    '  "*": { rate: 6/s }',
    '  "a.b[c]+(d)": { rate: 7/s }',
  ].join('\n'),
  'q.yaml',
);
const nameOf = (id: string) => resolveRule(rules, id).name;

describe('resolveRule', () => {
  describe('when an exact id matches', () => {
    it('wins over every glob', () => {
      expect(nameOf('team-a.billing')).toBe('team-a.billing');
    });

    it('takes regex characters literally', () => {
      expect(nameOf('a.b[c]+(d)')).toBe('a.b[c]+(d)');
      expect(nameOf('aXb[c]+(d)')).toBe('*');
    });
  });

  describe('when several globs match', () => {
    it('takes the one with the most characters other than *', () => {
      expect(nameOf('team-a.reports')).toBe('team-a.*');
      expect(nameOf('team-b')).toBe('team-*');
    });

    it('takes the earliest in the file between globs of equal length', () => {
      expect(nameOf('team-eu')).toBe('team-*'); // 5 literal characters against 3
      expect(nameOf('xy-eu')).toBe('*-eu'); // "*-eu" (3) before "x*y*" (2)
    });
  });

  describe('when * stands between dots and slashes', () => {
    it('matches any characters, dots and slashes included', () => {
      expect(nameOf('team-a.x/y.z')).toBe('team-a.*');
      expect(nameOf('team-')).toBe('team-*');
      expect(nameOf('x/../y')).toBe('x*y*');
    });
  });

  describe('when nothing matches', () => {
    it('falls back to default', () => {
      const onlyDefault = parseQuotas('default: { rate: 1/s }\nproducers:\n  a: { rate: 2/s }\n', 'q.yaml');
      expect(resolveRule(onlyDefault, 'b').name).toBe('default');
      expect(resolveRule(onlyDefault, 'b')).toBe(onlyDefault.default);
    });
  });

  describe('when two globs have the same number of literal characters', () => {
    it('takes the earlier one in the file', () => {
      const tie = parseQuotas('default: { rate: 1/s }\nproducers:\n  "ab*": { rate: 2/s }\n  "*ab": { rate: 3/s }\n', 'q.yaml');
      expect(resolveRule(tie, 'abab').name).toBe('ab*');
    });
  });

  describe('when the same id is resolved again', () => {
    it('returns the same frozen object', () => {
      const first = resolveRule(rules, 'team-z');
      expect(resolveRule(rules, 'team-z')).toBe(first);
      expect(Object.isFrozen(first)).toBe(true);
    });

    it('keeps the cache bounded', () => {
      const fresh = parseQuotas('default: { rate: 1/s }\n', 'q.yaml');
      for (let i = 0; i < RESOLVE_CACHE_SIZE + 10; i += 1) resolveRule(fresh, `p${i}`);
      expect(fresh.cache.size).toBe(RESOLVE_CACHE_SIZE);
      expect(fresh.cache.has('p0')).toBe(false);
    });

    it('forgets the least recently resolved id first, not the first one kept', () => {
      const fresh = parseQuotas('default: { rate: 1/s }\n', 'q.yaml');
      for (let i = 0; i < RESOLVE_CACHE_SIZE; i += 1) resolveRule(fresh, `p${i}`);
      resolveRule(fresh, 'p0');
      resolveRule(fresh, 'one more');
      expect(fresh.cache.has('p0')).toBe(true);
      expect(fresh.cache.has('p1')).toBe(false);
    });
  });

  describe('for any producer id', () => {
    it('agrees with a brute-force reading of the precedence', () => {
      const patterns = ['team-*', 'team-a.*', '*-eu', 'x*y*', 'team-a.billing', '*', 'a.b[c]+(d)'];
      const oracle = (id: string): string => {
        if (patterns.includes(id) && !id.includes('*')) return id;
        const matching = patterns.filter((p) => p.includes('*') && globRegexOracle(p).test(id));
        matching.sort((a, b) => literalLength(b) - literalLength(a) || patterns.indexOf(a) - patterns.indexOf(b));
        return matching[0] ?? 'default';
      };
      const id = fc.oneof(fc.string(), fc.constantFrom('team-a.', 'team-', 'x', 'y', '-eu', '.', '/').chain((a) => fc.string().map((b) => a + b)));
      fc.assert(fc.property(id, (producer) => nameOf(producer) === oracle(producer)));
    });
  });
});
