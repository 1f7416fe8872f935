import { parseQuotas, resolveRule } from '../../../src/rules';

const parse = (text: string) => parseQuotas(text, 'quotas.yaml');
const errorOf = (text: string): string => {
  try {
    parse(text);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected the file to be refused');
};

describe('the quota file\'s downstream budget', () => {
  it('reads total, weight and min', () => {
    const rules = parse([
      'total:',
      '  rate: 2000/s',
      '  bytes: 20MiB/s',
      '  follow:',
      '    group: orders-service',
      '    maxLag: 30s',
      'default:',
      '  rate: 500/s',
      '  weight: 1',
      'producers:',
      '  checkout: { weight: 4, min: 200/s }',
      '  batch: { rate: 10/s, weight: 0.5 }',
    ].join('\n'));
    expect(rules.total).toEqual({
      rate: 2000, rateLabel: '2000/s', bytes: 20 * 1024 * 1024, bytesLabel: '20MiB/s',
      follow: { group: 'orders-service', maxLag: { kind: 'duration', ms: 30_000 }, maxLagLabel: '30s' },
    });
    const checkout = resolveRule(rules, 'checkout');
    expect([checkout.weight, checkout.minRate, 1000 / (checkout.limit?.intervalMs ?? 0)]).toEqual([4, 200, 500]);
    expect(resolveRule(rules, 'batch').weight).toBe(0.5);
    expect(resolveRule(rules, 'anyone').weight).toBeUndefined(); // weight 1, the default
  });

  it('reads maxLag as a count of messages', () => {
    expect(parse('total: { rate: 100/s, follow: { group: g, maxLag: 5000 } }\ndefault: { rate: 10/s }').total?.follow?.maxLag).toEqual({ kind: 'count', messages: 5000 });
  });

  it('leaves the file without total as before', () => {
    expect(parse('default: { rate: 10/s }').total).toBeUndefined();
  });

  it.each([
    ['total: { bytes: 1MiB/s }\ndefault: { rate: 10/s }', 'quotas.yaml:1: total.rate: required, e.g. "2000/s"'],
    ['total: { rate: fast }\ndefault: { rate: 10/s }', 'quotas.yaml:1: total.rate: expected a rate N/s, N/m, N/h, N/d or N/<duration> such as "20/s", "1000/h" or "5/10s", got "fast"'],
    ['total:\n  rate: 100/s\n  burst: 5\ndefault: { rate: 10/s }', 'quotas.yaml:3: total: unknown key "burst" (expected rate, bytes, follow)'],
    ['total: 100/s\ndefault: { rate: 10/s }', 'quotas.yaml:1: total: expected a mapping such as { rate: 2000/s }'],
    ['total:\n  rate: 100/s\n  follow: { maxLag: 30s }\ndefault: { rate: 10/s }', 'quotas.yaml:3: total.follow.group: expected the downstream consumer group\'s name, got null'],
    ['total:\n  rate: 100/s\n  follow:\n    group: g\ndefault: { rate: 10/s }', 'quotas.yaml:3: total.follow.maxLag: required (a count of messages such as 10000, or a duration of the budget\'s rate such as 30s)'],
    ['default: { rate: 10/s }\nproducers:\n  a:\n    weight: 0', 'quotas.yaml:4: producer "a": weight: expected a number above zero, got 0'],
    ['default: { rate: 10/s, min: lots }\nproducers:\n  a: { weight: 2 }', 'quotas.yaml:1: default: min: expected a rate N/s, N/m, N/h, N/d or N/<duration> such as "20/s", "1000/h" or "5/10s", got "lots"'],
  ])('refuses %j with file, line and reason', (text, message) => {
    expect(errorOf(text)).toBe(message);
  });
});
