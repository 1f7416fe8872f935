import { manualClock } from '../../../src/clock';
import { createMemoryStore } from '../../../src/limit/memory-store';
import { parseQuotas, resolveRule } from '../../../src/rules';
import { runStatus } from '../../../src/status/status-command';

const rules = parseQuotas('default:\n  rate: 10/s\n  queue: 1m\nproducers:\n  billing:\n    rate: 2/s\n  "internal-*": { unlimited: true }\n', 'quotas.yaml');
const T0 = Date.UTC(2026, 0, 1);

const setup = () => {
  const clock = manualClock(T0);
  const store = createMemoryStore({ clock });
  let text = '';
  const deps = { store, rules, ruleOf: (id: string) => resolveRule(rules, id), out: { write: (s: string) => (text += s) } };
  return { store, deps, text: () => text };
};

describe('when asked about one producer with a backlog', () => {
  it('prints its rule, rate, backlog and next free slot from the store', async () => {
    const s = setup();
    const limit = resolveRule(rules, 'billing').limit;
    if (!limit) throw new Error('billing has a limit');
    await s.store.decide({ producer: 'billing', rule: limit, sizes: [1, 1, 1, 1, 1], now: T0 });
    expect(await runStatus(s.deps, 'billing')).toBe(0);
    expect(s.text()).toContain('rule:           billing');
    expect(s.text()).toContain('rate:           2/s');
    expect(s.text()).toContain('backlog:        2500 ms (~5 msgs)');
    expect(s.text()).toContain(`next free slot: ${new Date(T0 + 2500).toISOString()}`);
  });
});

describe('when asked about an idle or unlimited producer', () => {
  it('says the slot is free now, and that unlimited producers always pass', async () => {
    const s = setup();
    await runStatus(s.deps, 'someone');
    expect(s.text()).toContain('next free slot: now (idle)');
    await runStatus(s.deps, 'internal-batch');
    expect(s.text()).toContain('rate:           unlimited');
  });
});

describe('when the store does not answer', () => {
  it('says so and exits 3', async () => {
    const s = setup();
    const failing = { inspect: async () => Promise.reject(new Error('timed out after 50 ms')) };
    expect(await runStatus({ ...s.deps, store: failing }, 'billing')).toBe(3);
    expect(s.text()).toContain('store error: timed out after 50 ms');
  });
});

describe('when asked without a producer', () => {
  it('prints the rules in force and the producers the file names exactly', async () => {
    const s = setup();
    expect(await runStatus(s.deps)).toBe(0);
    expect(s.text()).toContain('rules in force (quotas.yaml)');
    expect(s.text()).toMatch(/PRODUCER\s+RULE\s+RATE\s+BACKLOG\s+NEXT FREE SLOT\nbilling\s+billing\s+2\/s\s+none\s+now \(idle\)/);
  });
});
