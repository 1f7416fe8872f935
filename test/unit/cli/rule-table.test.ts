import { ruleTable } from '../../../src/cli/rule-table';
import { parseQuotas } from '../../../src/rules/parse-quotas';

describe('ruleTable', () => {
  describe('when a queue is a number of messages', () => {
    it('says msgs, and a zero queue stays 0', () => {
      const rules = parseQuotas('default: { rate: 10/s, queue: 30 }\nproducers:\n  strict: { queue: 0 }\n', 'q.yaml');
      expect(ruleTable(rules.entries).split('\n')).toEqual([
        'PRODUCER  MATCH    ALGORITHM     RATE  QUEUE/BURST    BYTES  LIMITS  FLAGS',
        'strict    exact    leaky-bucket  10/s  queue 0        -      -       -',
        'default   default  leaky-bucket  10/s  queue 30 msgs  -      -       -',
      ]);
    });
  });

  describe('when a leaky bucket sets no queue', () => {
    it('shows the default queue', () => {
      const rules = parseQuotas('default: { rate: 10/s }\n', 'q.yaml');
      expect(ruleTable(rules.entries)).toContain('queue 1m');
    });
  });
});
