import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SluiceError } from '../../../src/errors';
import { parseQuotas } from '../../../src/rules/parse-quotas';

const fixtures = join(__dirname, '../../fixtures/quotas');
const parseFixture = (name: string) => parseQuotas(readFileSync(join(fixtures, name), 'utf8'), name);

/** One fixture per failure; `<file>` stands for the fixture's name. */
const failures: Array<[string, string]> = [
  ["bad-algorithm.yaml", "<file>:5: producer \"reports\": algorithm: expected leaky-bucket or token-bucket, got \"sliding-log\""],
  ["bad-bytes.yaml", "<file>:6: producer \"uploads\": bytes: expected a byte rate such as \"512KiB/s\" (units B, KB, KiB, MB, MiB, GB, GiB; per s, m, h, d), got \"1 megabyte\""],
  ["bad-queue.yaml", "<file>:3: default: queue: expected a duration such as \"500ms\", \"10s\", \"1m\", \"1h\" or \"1d\", or a whole number of messages (0 or more), got \"1 minute\" (no space between the number and its unit)"],
  ["bad-rate.yaml", "<file>:5: producer \"billing\": rate: expected a rate N/s, N/m, N/h, N/d or N/<duration> such as \"20/s\", \"1000/h\" or \"5/10s\", got \"fast\""],
  ["bad-window.yaml", "<file>:8: producer \"batch-*\": limits[1].per: expected a duration such as \"500ms\", \"10s\", \"1m\", \"1h\" or \"1d\", or a unit s, m, h or d, got \"1y\" (unknown unit \"y\"; the units are ms, s, m, h, d, case-sensitive)"],
  ["burst-on-leaky-bucket.yaml", "<file>:6: producer \"billing\": burst: a leaky bucket has no burst, it spaces messages; use queue (or algorithm: token-bucket)"],
  ["default-without-rate.yaml", "<file>:1: default: rate: required, e.g. \"20/s\""],
  ["duplicate-numeric-producer.yaml", "<file>:5: duplicate producer \"7\" (first at line 4)"],
  ["duplicate-producer.yaml", "<file>:8: duplicate producer \"billing\" (first at line 4)"],
  ["duplicate-rule-key.yaml", "<file>:6: producer \"billing\": duplicate key \"rate\" (first at line 5)"],
  ["duplicate-top-key.yaml", "<file>:3: duplicate key \"default\" (first at line 1)"],
  ["empty-producer-id.yaml", "<file>:4: producers: a producer id must be a non-empty string"],
  ["empty.yaml", "<file>:1: the file is empty; it needs at least a default rule, e.g. \"default: { rate: 100/s }\""],
  ["flag-not-boolean.yaml", "<file>:6: producer \"canary\": shadow: expected true or false, got \"yes\""],
  ["no-default.yaml", "<file>:1: no default rule: add one, e.g. \"default: { rate: 100/s }\" (or \"default: { unlimited: true }\" to let producers without a rule through)"],
  ["not-a-mapping.yaml", "<file>:1: expected a mapping with default and producers"],
  ["only-comments.yaml", "<file>:1: the file is empty; it needs at least a default rule, e.g. \"default: { rate: 100/s }\""],
  ["producers-not-mapping.yaml", "<file>:4: producers: expected a mapping of producer ids (or globs) to rules"],
  ["queue-on-token-bucket.yaml", "<file>:7: producer \"reports\": queue: a token bucket never delays, so it has no queue; use burst (or algorithm: leaky-bucket)"],
  ["rule-not-mapping.yaml", "<file>:4: producer \"billing\": expected a mapping of rule fields such as { rate: 20/s }"],
  ["rule-without-rate.yaml", "<file>:4: producer \"billing\": rate: required, e.g. \"20/s\""],
  ["several-errors.yaml", "<file>:6: producer \"b\": unknown key \"colour\" (expected algorithm, rate, queue, burst, bytes, limits, unlimited, shadow, weight, min)\n<file>:8: producer \"a\": rate: expected a rate N/s, N/m, N/h, N/d or N/<duration> such as \"20/s\", \"1000/h\" or \"5/10s\", got \"slow\"\n<file>:9: duplicate producer \"b\" (first at line 4)"],
  ["syntax-error.yaml", "<file>:5: Flow map in block collection must be sufficiently indented and end with a }"],
  ["unknown-rule-key.yaml", "<file>:5: producer \"billing\": unknown key \"rat\" (expected algorithm, rate, queue, burst, bytes, limits, unlimited, shadow, weight, min)"],
  ["unknown-top-key.yaml", "<file>:3: unknown key \"producer\" at the top level (expected total, default or producers)"],
  ["unlimited-with-rate.yaml", "<file>:6: producer \"internal-*\": unlimited: true cannot be combined with rate (remove one of them)"],
];

describe('parseQuotas', () => {
  describe('when the file is invalid', () => {
    it.each(failures)('refuses %s with file:line: reason', (name, message) => {
      let error: unknown;
      try {
        parseFixture(name);
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(SluiceError);
      expect((error as SluiceError).code).toBe('QUOTA_INVALID');
      expect((error as SluiceError).message).toBe(message.replaceAll('<file>', name));
    });
  });

  describe('when the file is the example of the contract', () => {
    const rules = parseFixture('contract-example.yaml');

    it('lists the rules in precedence order: exact ids, globs longest first, default', () => {
      expect(rules.entries.map((e) => [e.pattern, e.kind, e.line])).toEqual([
        ['billing', 'exact', 5],
        ['reports', 'exact', 14],
        ['canary', 'exact', 19],
        ['internal-*', 'glob', 18],
        ['batch-*', 'glob', 7],
        ['default', 'default', 1],
      ]);
    });

    it('lets each rule inherit what it does not set from default', () => {
      const billing = rules.exact.get('billing');
      expect(billing?.limit).toMatchObject({ algorithm: 'leaky-bucket', intervalMs: 50, capacityMs: 60_000 });
    });

    it('does not give a token bucket the queue of a leaky default', () => {
      expect(rules.exact.get('reports')?.limit).toMatchObject({ algorithm: 'token-bucket', burst: 100, intervalMs: 100 });
      expect(rules.entries.find((e) => e.pattern === 'reports')?.spec).toEqual({ algorithm: 'token-bucket', rate: '10/s', burst: 100 });
    });

    it('compiles windows, bytes and a zero queue', () => {
      const batch = rules.entries.find((e) => e.pattern === 'batch-*')?.resolved.limit;
      expect(batch?.capacityMs).toBe(0);
      expect(batch?.labels).toEqual({ rate: '5/s', bytes: '512KiB/s' });
      expect(batch?.windows.map((w) => [w.max, w.windowMs, w.kind])).toEqual([
        [1000, 3_600_000, 'sliding'],
        [20_000, 86_400_000, 'fixed'],
      ]);
    });

    it('marks unlimited and shadow rules', () => {
      const internal = rules.entries.find((e) => e.pattern === 'internal-*');
      expect(internal?.resolved).toEqual({ name: 'internal-*', unlimited: true, shadow: false });
      expect(internal?.spec).toEqual({});
      expect(rules.exact.get('canary')).toMatchObject({ name: 'canary', unlimited: false, shadow: true });
    });

    it('gives every rule its name', () => {
      expect(rules.default.name).toBe('default');
      expect(rules.exact.get('billing')?.name).toBe('billing');
    });
  });

  describe('when producer ids are numbers or booleans', () => {
    it('reads them as the text written', () => {
      const rules = parseQuotas('default: { rate: 1/s }\nproducers:\n  007: { rate: 2/s }\n  1.50: { rate: 3/s }\n  true: { rate: 4/s }\n', 'q.yaml');
      expect([...rules.exact.keys()]).toEqual(['007', '1.50', 'true']);
    });
  });

  describe('when default is unlimited', () => {
    const rules = parseQuotas('default: { unlimited: true }\nproducers:\n  billing: { rate: 20/s }\n  audit: { shadow: true }\n', 'q.yaml');

    it('leaves a rule that sets its own rate limited', () => {
      expect(rules.exact.get('billing')).toMatchObject({ unlimited: false, limit: { intervalMs: 50 } });
    });

    it('lets a rule that sets no limit inherit unlimited', () => {
      expect(rules.exact.get('audit')).toEqual({ name: 'audit', unlimited: true, shadow: true });
    });
  });

  describe('when a rule sets a field to null', () => {
    it('drops the inherited value', () => {
      const rules = parseQuotas('default: { rate: 1/s, bytes: 1KiB/s, limits: [10/m] }\nproducers:\n  a: { bytes: ~, limits: [] }\n', 'q.yaml');
      expect(rules.exact.get('a')?.limit).toMatchObject({ windows: [], labels: { rate: '1/s' } });
      expect(rules.exact.get('a')?.limit?.byteIntervalMs).toBeUndefined();
    });
  });

  describe('when a leaky-bucket rule has a token-bucket default', () => {
    it('does not inherit burst', () => {
      const rules = parseQuotas('default: { algorithm: token-bucket, rate: 10/s, burst: 50 }\nproducers:\n  a: { algorithm: leaky-bucket, queue: 5 }\n', 'q.yaml');
      expect(rules.exact.get('a')?.limit).toMatchObject({ algorithm: 'leaky-bucket', burst: 1, capacityMs: 500 });
    });
  });

  describe('when the content is the same', () => {
    it('gives the same digest', () => {
      expect(parseQuotas('default: { rate: 1/s }\n', 'a').digest).toBe(parseQuotas('default: { rate: 1/s }\n', 'b').digest);
      expect(parseQuotas('default: { rate: 1/s }\n', 'a').digest).not.toBe(parseQuotas('default: { rate: 2/s }\n', 'a').digest);
    });
  });
});
