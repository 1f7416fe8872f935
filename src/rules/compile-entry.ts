/**
 * One rule with what it inherits from `default`, compiled by the limiter's compileRule.
 * Inheritance: every field the rule does not set comes from default, except that a rule
 * never inherits the other algorithm's field (queue is leaky-bucket only, burst
 * token-bucket only), and a rule that sets any limit field is limited unless it says
 * `unlimited: true` itself. A field set to null (`bytes: ~`) drops the inherited value.
 */
import { compileRule, type RuleSpec } from '../limit/compile-rule';
import { LIMIT_KEYS, type RawRule, type RuleKey } from './read-rule';
import { readShare } from './read-share';
import type { ResolvedRule } from './types';
import { at, lineOf, type YamlSource } from './yaml-source';

type Origin = 'rule' | 'default';

export interface Effective {
  spec: Partial<RuleSpec>;
  origin: Partial<Record<RuleKey, Origin>>;
  unlimited: boolean;
  shadow: boolean;
}

const algorithmOf = (rule: RawRule, base?: RawRule): unknown => {
  const own = rule.fields.algorithm;
  if (own) return own.value ?? 'leaky-bucket';
  return base?.fields.algorithm?.value ?? 'leaky-bucket';
};

const inheritable = (key: RuleKey, algorithm: unknown): boolean =>
  !(key === 'queue' && algorithm === 'token-bucket') && !(key === 'burst' && algorithm !== 'token-bucket');

/** The fields in force for a rule (base: the default rule, absent when compiling default itself). */
export const effectiveOf = (rule: RawRule, base?: RawRule): Effective => {
  const spec: Record<string, unknown> = {};
  const origin: Partial<Record<RuleKey, Origin>> = {};
  const algorithm = algorithmOf(rule, base);
  for (const key of LIMIT_KEYS) {
    const own = rule.fields[key];
    const inherited = base?.fields[key];
    if (own) {
      if (own.value !== null) [spec[key], origin[key]] = [own.value, 'rule'];
    } else if (inherited && inherited.value !== null && inheritable(key, algorithm)) {
      [spec[key], origin[key]] = [inherited.value, 'default'];
    }
  }
  const setsLimit = LIMIT_KEYS.some((key) => origin[key] === 'rule');
  const ownUnlimited = rule.fields.unlimited?.value;
  const unlimited = typeof ownUnlimited === 'boolean' ? ownUnlimited : !setsLimit && base?.fields.unlimited?.value === true;
  const shadow = (rule.fields.shadow?.value ?? base?.fields.shadow?.value ?? false) === true;
  return { spec: spec as Partial<RuleSpec>, origin, unlimited, shadow };
};

const errorLine = (source: YamlSource, rule: RawRule, base: RawRule | undefined, eff: Effective, error: { path: Array<string | number>; message: string }): string => {
  const field = error.path[0] as RuleKey | undefined;
  const from = field ? eff.origin[field] : undefined;
  if (from === 'rule') {
    const node = rule.map.getIn(error.path, true) ?? rule.fields[field as RuleKey]?.node;
    return at(source, node, `${rule.label}: ${error.message}`);
  }
  if (from === 'default' && base) {
    const line = lineOf(source, base.map.getIn(error.path, true) ?? base.fields[field as RuleKey]?.node);
    return at(source, rule.keyNode, `${rule.label}: ${error.message} (${field} inherited from default, line ${line})`);
  }
  return at(source, rule.keyNode, `${rule.label}: ${error.message}`);
};

/** Compiles a rule into what resolveRule hands out; errors read `file:line: reason`. */
export const compileEntry = (source: YamlSource, rule: RawRule, base?: RawRule): { eff: Effective; resolved?: ResolvedRule; errors: string[] } => {
  const eff = effectiveOf(rule, base);
  if (eff.unlimited) return { eff: { ...eff, spec: {} }, resolved: { name: rule.name, unlimited: true, shadow: eff.shadow }, errors: [] };
  const result = compileRule(eff.spec as RuleSpec);
  const shareErrors: string[] = [];
  const { weight, minRate } = readShare(source, rule, base, shareErrors);
  if (!result.ok) return { eff, errors: [...result.errors.map((error) => errorLine(source, rule, base, eff, error)), ...shareErrors] };
  if (shareErrors.length > 0) return { eff, errors: shareErrors };
  return { eff, resolved: { name: rule.name, unlimited: false, shadow: eff.shadow, limit: result.rule, ...(weight !== 1 ? { weight } : {}), ...(minRate > 0 ? { minRate } : {}) }, errors: [] };
};
