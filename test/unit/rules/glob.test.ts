import fc from 'fast-check';
import { compileGlob, isGlob, literalLength } from '../../../src/rules/glob';
import { globRegexOracle } from './glob-oracle';

const matches = (pattern: string, id: string): boolean => compileGlob(pattern)(id);

describe('compileGlob', () => {
  it('anchors the pattern at both ends', () => {
    expect(matches('a*', 'ba')).toBe(false);
    expect(matches('*a', 'ab')).toBe(false);
    expect(matches('a*b', 'a-b')).toBe(true);
    expect(matches('a*b', 'a-b-')).toBe(false);
  });

  it('lets * match nothing, or any characters: dots, slashes and new lines too', () => {
    expect(matches('team-*', 'team-')).toBe(true);
    expect(matches('a*b', 'a.x/y\nb')).toBe(true);
    expect(matches('*', '')).toBe(true);
    expect(matches('**', 'anything')).toBe(true);
    expect(matches('a**b', 'ab')).toBe(true);
  });

  it('does not let a prefix and a suffix share characters', () => {
    expect(matches('ab*ba', 'aba')).toBe(false);
    expect(matches('ab*ba', 'abba')).toBe(true);
    expect(matches('a*a*a', 'aa')).toBe(false);
    expect(matches('a*a*a', 'aaa')).toBe(true);
  });

  it('takes every other character literally, case included', () => {
    expect(matches('a.b[c]+(d)*', 'a.b[c]+(d)x')).toBe(true);
    expect(matches('a.b*', 'aXb')).toBe(false);
    expect(matches('Team-*', 'team-a')).toBe(false);
    expect(matches('exact', 'exact')).toBe(true);
    expect(matches('exact', 'exactly')).toBe(false);
  });

  it('agrees with the regex it replaces on short patterns and ids', () => {
    const char = fc.constantFrom('a', 'b', '-', '.', '/', '\n', '[', '(', '+', '?', '$', '\\', 'é');
    const text = (maxLength: number) => fc.array(char, { maxLength }).map((cs) => cs.join(''));
    const pattern = fc.array(fc.oneof({ weight: 2, arbitrary: text(3) }, { weight: 1, arbitrary: fc.constant('') }), { minLength: 1, maxLength: 5 }).map((parts) => parts.join('*'));
    fc.assert(
      fc.property(pattern, text(12), (p, id) => matches(p, id) === globRegexOracle(p).test(id)),
      { numRuns: 5000 },
    );
    // ids built from the pattern's own pieces, which match far more often than random ones
    const built = pattern.chain((p) => fc.array(fc.oneof(text(2), fc.constantFrom(...p.split('*'))), { maxLength: 6 }).map((parts) => [p, parts.join('')] as const));
    fc.assert(fc.property(built, ([p, id]) => matches(p, id) === globRegexOracle(p).test(id)), { numRuns: 5000 });
  });

  it('matches a 200-character id that does not match against a ten-star glob in linear time', () => {
    // The regex it replaces did not finish the first and the third in minutes (10 stars and a 40-character id: 5 s).
    const cases: [string, string][] = [
      ['*-*-*-*-*-*-*-*-*-*-eu', '-'.repeat(200)], // the suffix fails at once
      ['*-*-*-*-*-*-*-*-*-*-eu', `${'x'.repeat(189)}${'-'.repeat(8)}-eu`], // 8 of 9 middle segments found, the last scan fails
      ['*a*a*a*a*a*a*a*a*ab*', 'a'.repeat(200)], // the last middle segment scans the whole id
      ['a*aaaaaaaaab*aaaaaaaaab*aaaaaaaaab*aaaaaaaaab*aaaaaaaaab*aaaaaaaaab*aaaaaaaaab*aaaaaaaaab*aaaaaaaaab*aaaaaaaaab', 'a'.repeat(200)],
    ];
    for (const [pattern, id] of cases) {
      expect(pattern.split('*')).toHaveLength(11);
      expect(id).toHaveLength(200);
      const glob = compileGlob(pattern);
      expect(glob(id)).toBe(false);
      expect(globRegexOracle(pattern).test('-')).toBe(glob('-')); // same semantics on a short id
      // the best of ten rounds of 1,000 (a busy CI machine stalls some)
      const ms = Math.min(...Array.from({ length: 10 }, () => {
        const started = process.hrtime.bigint();
        for (let i = 0; i < 1000; i += 1) glob(id);
        return Number(process.hrtime.bigint() - started) / 1e6;
      }));
      process.stdout.write(`1,000 matches of a 200-character id against ${pattern.slice(0, 24)}…: ${ms.toFixed(3)} ms\n`);
      // 0.03–2.3 ms measured on a 2-core machine, up to 6.4 ms at a load of 16 (V8's indexOf takes
      // ~12 ns a position for a short segment): 20 µs a match still, far under a millisecond
      expect(ms).toBeLessThan(20);
    }
  });
});

describe('isGlob and literalLength', () => {
  it('tell a glob from an exact id, and count its characters other than *', () => {
    expect(isGlob('batch-*')).toBe(true);
    expect(isGlob('billing')).toBe(false);
    expect(literalLength('*-*-eu')).toBe(4);
  });
});
