import pino from 'pino';
import { manualClock } from '../../../src/clock';
import { createBudget, CADENCE_MS, type Budget } from '../../../src/budget/budget';
import type { BudgetStore } from '../../../src/budget/budget-store';
import type { DemandReport } from '../../../src/budget/demand-meter';
import type { Candidate, Verdict } from '../../../src/decide/fetch-decider';
import { parseQuotas, resolveRule } from '../../../src/rules';

const logger = pino({ level: 'silent' });

/** Redis as the replicas see it: each one's last report. */
const sharedStore = (clock: { now(): number }) => {
  const reports = new Map<string, DemandReport[]>();
  return (replica: string): BudgetStore => ({
    exchange: async ({ reports: mine }) => {
      reports.set(replica, [...mine]);
      return { now: clock.now(), replicas: [...reports.values()] };
    },
  });
};

const budgetOf = (text: string, store: BudgetStore, clock = manualClock(0)): Budget => {
  const rules = parseQuotas(text, 'quotas.yaml');
  return createBudget({ rules: () => rules, resolve: resolveRule, store, clock, members: () => 1, fallbackActive: () => false, logger });
};

/** Every candidate decided with its rule's interval, all admitted far ahead (backlogged). */
const decideBacklogged = async (budget: Budget, clock: { now(): number }, producers: string[], each: number): Promise<void> => {
  const inner = { decide: async (c: readonly Candidate[]): Promise<Verdict[]> => c.map(() => ({ kind: 'forward', at: clock.now() + 250 })) };
  const candidates = producers.flatMap((producer) => Array.from({ length: each }, () => ({ producer, rule: budget.ruleOf(producer), size: 100 })));
  await budget.decider(inner).decide(candidates);
};

const rateOf = (budget: Budget, producer: string): number => 1000 / (budget.ruleOf(producer).limit?.intervalMs ?? NaN);

describe('the budget across replicas', () => {
  const text = 'total: { rate: 300/s }\ndefault: { rate: 500/s }\nproducers:\n  c: { weight: 2 }\n';

  it('counts what each producer\'s share allowed into the usage history, each replica its part', async () => {
    const clock = manualClock(0);
    const store = sharedStore(clock);
    const counted = new Map<string, number>();
    const countShare = (producer: string, n: number): void => void counted.set(producer, (counted.get(producer) ?? 0) + n);
    const rules = parseQuotas(text, 'quotas.yaml');
    const [r1, r2] = ['r1', 'r2'].map((r) => createBudget({ rules: () => rules, resolve: resolveRule, store: store(r), clock, members: () => 2, fallbackActive: () => false, logger, countShare }));
    for (let k = 0; k < 12; k += 1) {
      for (const r of [r1, r2]) await decideBacklogged(r, clock, ['a', 'b', 'c'], 20);
      await r1.tick();
      await r2.tick();
      clock.advance(CADENCE_MS);
    }
    counted.clear();
    // Settled at 75/75/150: four seconds give 300, 300 and 600 messages, whatever replica counts them.
    for (let k = 0; k < 16; k += 1) {
      for (const r of [r1, r2]) await decideBacklogged(r, clock, ['a', 'b', 'c'], 20);
      await r1.tick();
      await r2.tick();
      clock.advance(CADENCE_MS);
    }
    expect(['a', 'b', 'c'].map((p) => counted.get(p) ?? 0)).toEqual([300, 300, 600]);
  });

  it('leaves every rule as it is without total:', async () => {
    const rules = parseQuotas('default: { rate: 500/s }', 'quotas.yaml');
    const budget = createBudget({ rules: () => rules, resolve: resolveRule, store: sharedStore(manualClock(0))('r1'), clock: manualClock(0), members: () => 1, fallbackActive: () => false, logger });
    await budget.tick();
    expect(budget.ruleOf('a')).toBe(resolveRule(rules, 'a'));
    expect(budget.status()).toBeUndefined();
  });

  it('settles two replicas on the same weighted shares of producers backlogged on both', async () => {
    const clock = manualClock(0);
    const store = sharedStore(clock);
    const [r1, r2] = [budgetOf(text, store('r1'), clock), budgetOf(text, store('r2'), clock)];
    for (let k = 0; k < 12; k += 1) {
      await decideBacklogged(r1, clock, ['a', 'b', 'c'], 20);
      await decideBacklogged(r2, clock, ['a', 'b', 'c'], 20);
      await r1.tick();
      await r2.tick();
      clock.advance(CADENCE_MS);
    }
    for (const r of [r1, r2]) expect(['a', 'b', 'c'].map((p) => Math.round(rateOf(r, p)))).toEqual([75, 75, 150]);
    expect(r1.status()).toMatchObject({ rate: '300/s', inForce: 300, replicas: 2 });
  });

  it('gives an idle producer\'s part to the others within a second', async () => {
    const clock = manualClock(0);
    const r1 = budgetOf(text, sharedStore(clock)('r1'), clock);
    for (let k = 0; k < 8; k += 1) {
      await decideBacklogged(r1, clock, ['a', 'b', 'c'], 20);
      await r1.tick();
      clock.advance(CADENCE_MS);
    }
    expect(Math.round(rateOf(r1, 'a'))).toBe(75);
    let waited = 0;
    while (Math.round(rateOf(r1, 'a')) !== 150 && waited < 5000) {
      await decideBacklogged(r1, clock, ['a', 'b'], 20);
      await r1.tick();
      clock.advance(CADENCE_MS);
      waited += CADENCE_MS;
    }
    expect(waited).toBeLessThanOrEqual(1000);
  });
});
