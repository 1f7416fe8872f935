import { parseQuotas } from '../../../src/rules/parse-quotas';
import { quotaWarnings } from '../../../src/rules/quota-warnings';

const day = 86_400_000;

describe('quotaWarnings', () => {
  describe('when every rule can deliver within retry.maxAge', () => {
    it('warns about nothing', () => {
      const rules = parseQuotas('default: { rate: 10/s, queue: 1h, limits: [1000/d] }\n', 'q.yaml');
      expect(quotaWarnings(rules, { retry: { maxAgeMs: day } })).toEqual([]);
    });
  });

  describe('when a queue is longer than retry.maxAge', () => {
    it('names the rule, its line, the delay and its cause', () => {
      const rules = parseQuotas('default: { rate: 10/s }\nproducers:\n  slow: { rate: 1/s, queue: 2d }\n', 'q.yaml');
      expect(quotaWarnings(rules, { retry: { maxAgeMs: day } })).toEqual([
        {
          rule: 'slow',
          message: 'q.yaml:3: rule "slow" may delay a message by up to 2d (queue 2d), longer than retry.maxAge (1d): such messages are dead-lettered',
        },
      ]);
    });
  });

  describe('when a queue counted in messages is longer than retry.maxAge', () => {
    it('converts it with the rate', () => {
      const rules = parseQuotas('default: { rate: 1/m, queue: 120 }\n', 'q.yaml');
      expect(quotaWarnings(rules, { retry: { maxAgeMs: 3_600_000 } })[0].message).toBe(
        'q.yaml:1: rule default may delay a message by up to 2h (queue 2h), longer than retry.maxAge (1h): such messages are dead-lettered',
      );
    });
  });

  describe('when a window is longer than retry.maxAge', () => {
    it('names the window', () => {
      const rules = parseQuotas('default: { rate: 10/s, queue: 1m }\nproducers:\n  "batch-*": { limits: [{ max: 100, per: 7d }] }\n', 'q.yaml');
      expect(quotaWarnings(rules, { retry: { maxAgeMs: day } }).map((w) => w.message)).toEqual([
        'q.yaml:3: rule "batch-*" may delay a message by up to 7d (window 100/7d), longer than retry.maxAge (1d): such messages are dead-lettered',
      ]);
    });
  });

  describe('when a rule is unlimited', () => {
    it('never warns about it', () => {
      const rules = parseQuotas('default: { unlimited: true }\n', 'q.yaml');
      expect(quotaWarnings(rules, { retry: { maxAgeMs: 1 } })).toEqual([]);
    });
  });
});
