import { describeQuotas } from '../../../src/rules/describe-quotas';
import { parseQuotas } from '../../../src/rules/parse-quotas';

describe('describeQuotas', () => {
  describe('when the rules are shown over HTTP', () => {
    it('gives plain JSON in matching order with when they were loaded', () => {
      const rules = parseQuotas('default: { rate: 10/s }\nproducers:\n  "a-*": { unlimited: true }\n  b: { rate: 1/s, shadow: true }\n', 'q.yaml');
      const view = describeQuotas(rules, Date.UTC(2026, 10, 21, 12, 0, 0));
      expect(JSON.parse(JSON.stringify(view))).toEqual({
        file: 'q.yaml',
        digest: rules.digest,
        loadedAt: '2026-11-21T12:00:00.000Z',
        rules: [
          { pattern: 'b', match: 'exact', line: 4, unlimited: false, shadow: true, spec: { rate: '1/s' } },
          { pattern: 'a-*', match: 'glob', line: 3, unlimited: true, shadow: false, spec: {} },
          { pattern: 'default', match: 'default', line: 1, unlimited: false, shadow: false, spec: { rate: '10/s' } },
        ],
      });
    });
  });
});
