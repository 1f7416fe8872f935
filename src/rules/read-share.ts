/**
 * A rule's part of a contended downstream budget: `weight` (its share, default 1) and `min` (a
 * rate guaranteed out of the budget while it has demand). Both inherit from default like the
 * limit fields. Errors read `file:line: <rule>: weight…: reason`.
 */
import { RateSyntaxError, parseRate } from '../limit/rate-syntax';
import type { RawRule } from './read-rule';
import { at, type YamlSource } from './yaml-source';

export interface Share {
  weight: number;
  /** Messages per second, 0 without a minimum. */
  minRate: number;
}

const fieldOf = (key: 'weight' | 'min', rule: RawRule, base?: RawRule) => {
  const own = rule.fields[key];
  if (own) return own.value === null ? undefined : { ...own, from: rule };
  const inherited = base?.fields[key];
  return inherited && inherited.value !== null ? { ...inherited, from: base as RawRule } : undefined;
};

const where = (source: YamlSource, rule: RawRule, field: { node: unknown; from: RawRule }, message: string): string =>
  field.from === rule ? at(source, field.node, `${rule.label}: ${message}`) : at(source, rule.keyNode, `${rule.label}: ${message} (inherited from default)`);

export const readShare = (source: YamlSource, rule: RawRule, base: RawRule | undefined, errors: string[]): Share => {
  const share: Share = { weight: 1, minRate: 0 };
  const weight = fieldOf('weight', rule, base);
  if (weight) {
    if (typeof weight.value === 'number' && Number.isFinite(weight.value) && weight.value > 0) share.weight = weight.value;
    else errors.push(where(source, rule, weight, `weight: expected a number above zero, got ${JSON.stringify(weight.value)}`));
  }
  const min = fieldOf('min', rule, base);
  if (min) {
    try {
      const rate = parseRate(min.value, 'min');
      share.minRate = (rate.count * 1000) / rate.perMs;
    } catch (error) {
      if (!(error instanceof RateSyntaxError)) throw error;
      errors.push(where(source, rule, min, error.message));
    }
  }
  return share;
};
