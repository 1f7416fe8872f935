/**
 * The quota file (YAML, docs/contract.md "Quota file") → QuotaRules. The whole file is refused on any error:
 * every error is collected, one line each, as `file:line: reason`, in one QUOTA_INVALID.
 * `default` is required: a producer that matches no rule must be held to something the
 * file says (write `default: { unlimited: true }` to let unmatched producers through).
 */
import { createHash } from 'node:crypto';
import { SluiceError } from '../errors';
import { compileEntry } from './compile-entry';
import { readRule, type RawRule } from './read-rule';
import { readTotal } from './read-total';
import { buildIndex, type IndexEntry } from './rule-index';
import type { QuotaRules } from './types';
import { asMap, at, keyText, lineOf, parseYaml, type MapNode, type YamlSource } from './yaml-source';

const TOP_KEYS = ['total', 'default', 'producers'];

const readTop = (source: YamlSource, map: MapNode, errors: string[]) => {
  const found: Record<string, { key: unknown; value: unknown }> = {};
  for (const pair of map.items) {
    const key = keyText(pair);
    if (key === undefined || !TOP_KEYS.includes(key)) {
      errors.push(at(source, pair.key, `unknown key ${JSON.stringify(key ?? pair.key)} at the top level (expected total, default or producers)`));
    } else if (found[key]) {
      errors.push(at(source, pair.key, `duplicate key "${key}" (first at line ${lineOf(source, found[key].key)})`));
    } else {
      found[key] = { key: pair.key, value: pair.value };
    }
  }
  return found;
};

const readProducers = (source: YamlSource, node: { key: unknown; value: unknown } | undefined, errors: string[]): RawRule[] => {
  if (!node || node.value === null || node.value === undefined) return [];
  const map = asMap(node.value);
  if (!map) {
    errors.push(at(source, node.value, 'producers: expected a mapping of producer ids (or globs) to rules'));
    return [];
  }
  const rules: RawRule[] = [];
  const firstLine = new Map<string, number>();
  for (const pair of map.items) {
    const id = keyText(pair);
    if (id === undefined || id === '') {
      errors.push(at(source, pair.key, 'producers: a producer id must be a non-empty string'));
      continue;
    }
    if (firstLine.has(id)) {
      errors.push(at(source, pair.key, `duplicate producer "${id}" (first at line ${firstLine.get(id)})`));
      continue;
    }
    firstLine.set(id, lineOf(source, pair.key));
    const { rule, errors: ruleErrors } = readRule(source, id, `producer "${id}"`, pair.key, pair.value);
    errors.push(...ruleErrors);
    if (rule) rules.push(rule);
  }
  return rules;
};

const compileAll = (source: YamlSource, base: RawRule, producers: RawRule[], errors: string[]): IndexEntry[] => {
  const compiledDefault = compileEntry(source, base);
  if (compiledDefault.errors.length > 0) {
    errors.push(...compiledDefault.errors);
    return [];
  }
  const entries: IndexEntry[] = [];
  for (const [order, rule] of [...producers, base].entries()) {
    const compiled = rule === base ? compiledDefault : compileEntry(source, rule, base);
    errors.push(...compiled.errors);
    if (compiled.resolved) {
      entries.push({ pattern: rule.name, line: lineOf(source, rule.keyNode), order, spec: compiled.eff.spec, resolved: compiled.resolved, isDefault: rule === base });
    }
  }
  return entries;
};

/** One error per line, in file order. */
const failWith = (file: string) => (errors: string[]): never => {
  const lineNo = (error: string) => parseInt(error.slice(file.length + 1), 10) || 0;
  throw new SluiceError('QUOTA_INVALID', [...errors].sort((a, b) => lineNo(a) - lineNo(b)).join('\n'));
};

/** Parses and compiles a quota file's text; `file` names it in errors. Throws QUOTA_INVALID. */
export const parseQuotas = (text: string, file: string): QuotaRules => {
  const { source, errors } = parseYaml(text, file);
  const fail = failWith(file);
  if (errors.length > 0) fail(errors);
  const top = source.doc.contents;
  if (top === null || top === undefined) fail([`${file}:1: the file is empty; it needs at least a default rule, e.g. "default: { rate: 100/s }"`]);
  const map = asMap(top);
  if (!map) fail([at(source, top, 'expected a mapping with default and producers')]);
  const found = readTop(source, map as MapNode, errors);
  const producers = readProducers(source, found.producers, errors);
  let base: RawRule | undefined;
  if (!found.default) {
    errors.push(`${file}:1: no default rule: add one, e.g. "default: { rate: 100/s }" (or "default: { unlimited: true }" to let producers without a rule through)`);
  } else {
    const read = readRule(source, 'default', 'default', found.default.key, found.default.value);
    errors.push(...read.errors);
    base = read.rule;
  }
  const entries = base ? compileAll(source, base, producers, errors) : [];
  const total = found.total ? readTotal(source, found.total, errors) : undefined;
  if (errors.length > 0) fail(errors);
  const rules = buildIndex(file, createHash('sha256').update(text).digest('hex'), entries);
  return total ? { ...rules, total } : rules;
};
