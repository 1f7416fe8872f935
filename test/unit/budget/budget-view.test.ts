import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { quotasCheck } from '../../../src/cli/quotas-check';
import { runStatus } from '../../../src/status/status-command';
import { parseQuotas, resolveRule } from '../../../src/rules';

const capture = () => {
  const chunks: string[] = [];
  return { write: (text: string) => chunks.push(text), text: () => chunks.join('') };
};

const TEXT = [
  'total:',
  '  rate: 800/s',
  '  follow: { group: orders-service, maxLag: 30s }',
  'default:',
  '  rate: 500/s',
  'producers:',
  '  checkout: { weight: 4, min: 200/s }',
  '  "batch-*": { rate: 100/s }',
  '  "internal-*": { unlimited: true }',
  '',
].join('\n');

describe('the budget in sluice quotas check', () => {
  it('prints the budget and the shares at full demand', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-budget-'));
    const file = join(dir, 'quotas.yaml');
    writeFileSync(file, TEXT);
    const [out, err] = [capture(), capture()];
    try {
      expect(quotasCheck({ file, env: {}, out, err })).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(out.text()).toContain([
      'downstream budget (total): 800/s; shrinks while group orders-service lags on the downstream topic by more than 30s',
      'shares at full demand (each rule as one producer, all backlogged):',
      'PRODUCER    WEIGHT  MIN    OWN RATE   DEMAND  SHARE',
      'checkout    4       200/s  500/s      500/s   500/s',
      'internal-*  1       -      unlimited  -       outside the budget',
      'batch-*     1       -      100/s      100/s   100/s',
      'default     1       -      500/s      500/s   200/s',
    ].join('\n'));
  });
});

describe('the budget in sluice status', () => {
  it('prints the rate in force and the shares the replicas\' reports give now', async () => {
    const rules = parseQuotas(TEXT, 'quotas.yaml');
    const out = capture();
    const budget = async () => ({
      replicas: [[{ producer: 'checkout', rate: 900, bytes: 0, backlogged: true }], [{ producer: 'someone', rate: 900, bytes: 0, backlogged: true }]],
      followed: 600,
    });
    await runStatus({ store: { inspect: async () => ({ producer: 'x', backlogMs: 0, now: 0 }) }, rules, ruleOf: (id) => resolveRule(rules, id), out, budget });
    expect(out.text()).toContain([
      'in force: 600/s (followed), 2 replica(s) reporting',
      'shares now:',
      'PRODUCER  WEIGHT  MIN    OWN RATE  DEMAND  SHARE',
      'checkout  4       200/s  500/s     500/s   480/s',
      'someone   1       -      500/s     500/s   120/s',
    ].join('\n'));
  });
});
