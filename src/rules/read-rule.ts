/** One rule mapping of the quota file: whitelisted keys, no duplicates, flags that are booleans. */
import { asMap, at, keyText, lineOf, toPlain, type MapNode, type YamlSource } from './yaml-source';

export const LIMIT_KEYS = ['algorithm', 'rate', 'queue', 'burst', 'bytes', 'limits'] as const;
export const RULE_KEYS = [...LIMIT_KEYS, 'unlimited', 'shadow', 'weight', 'min'] as const;
export type RuleKey = (typeof RULE_KEYS)[number];

export interface RawField {
  /** Plain data; null means "unset here and not inherited". */
  value: unknown;
  node: unknown;
}

export interface RawRule {
  name: string;
  /** How errors name the rule: `default` or `producer "billing"`. */
  label: string;
  keyNode: unknown;
  map: MapNode;
  fields: Partial<Record<RuleKey, RawField>>;
}

const flag = (source: YamlSource, rule: RawRule, key: 'unlimited' | 'shadow', errors: string[]): void => {
  const field = rule.fields[key];
  if (field && field.value !== null && typeof field.value !== 'boolean') {
    errors.push(at(source, field.node, `${rule.label}: ${key}: expected true or false, got ${JSON.stringify(field.value)}`));
  }
};

const readFields = (source: YamlSource, rule: RawRule, errors: string[]): void => {
  for (const pair of rule.map.items) {
    const key = keyText(pair);
    if (key === undefined || !(RULE_KEYS as readonly string[]).includes(key)) {
      errors.push(at(source, pair.key, `${rule.label}: unknown key ${JSON.stringify(key ?? toPlain(source, pair.key))} (expected ${RULE_KEYS.join(', ')})`));
    } else if (rule.fields[key as RuleKey]) {
      const first = lineOf(source, rule.map.items.find((p) => keyText(p) === key)?.key);
      errors.push(at(source, pair.key, `${rule.label}: duplicate key "${key}" (first at line ${first})`));
    } else {
      rule.fields[key as RuleKey] = { value: toPlain(source, pair.value), node: pair.value ?? pair.key };
    }
  }
};

/** Reads a rule; returns undefined with errors when its shape is wrong. */
export const readRule = (source: YamlSource, name: string, label: string, keyNode: unknown, valueNode: unknown): { rule?: RawRule; errors: string[] } => {
  const map = asMap(valueNode);
  if (!map) {
    return { errors: [at(source, valueNode ?? keyNode, `${label}: expected a mapping of rule fields such as { rate: 20/s }`)] };
  }
  const rule: RawRule = { name, label, keyNode, map, fields: {} };
  const errors: string[] = [];
  readFields(source, rule, errors);
  flag(source, rule, 'unlimited', errors);
  flag(source, rule, 'shadow', errors);
  if (rule.fields.unlimited?.value === true) {
    const clash = LIMIT_KEYS.find((key) => rule.fields[key] && rule.fields[key]?.value !== null);
    if (clash) errors.push(at(source, rule.fields[clash]?.node, `${label}: unlimited: true cannot be combined with ${clash} (remove one of them)`));
  }
  return errors.length > 0 ? { errors } : { rule, errors };
};
