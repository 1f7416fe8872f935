/**
 * The `total:` block of the quota file (docs/design.md "The downstream budget"): a budget for
 * everything forwarded downstream, all producers and replicas together. Errors read
 * `file:line: total…: reason` like every other error of the file.
 */
import { RateSyntaxError, parseByteRate, parseQueue, parseRate } from '../limit/rate-syntax';
import type { BudgetSpec } from './types';
import { asMap, at, keyText, toPlain, type MapNode, type YamlSource } from './yaml-source';

const TOTAL_KEYS = ['rate', 'bytes', 'follow'];
const FOLLOW_KEYS = ['group', 'maxLag'];

/** The pairs of a mapping by key, every unknown or repeated key reported. */
const fieldsOf = (source: YamlSource, map: MapNode, label: string, allowed: string[], errors: string[]): Map<string, { key: unknown; value: unknown }> => {
  const fields = new Map<string, { key: unknown; value: unknown }>();
  for (const pair of map.items) {
    const key = keyText(pair);
    if (key === undefined || !allowed.includes(key)) errors.push(at(source, pair.key, `${label}: unknown key ${JSON.stringify(key ?? toPlain(source, pair.key))} (expected ${allowed.join(', ')})`));
    else if (fields.has(key)) errors.push(at(source, pair.key, `${label}: duplicate key "${key}"`));
    else fields.set(key, { key: pair.key, value: pair.value });
  }
  return fields;
};

const parsed = <T>(source: YamlSource, node: unknown, errors: string[], parse: () => T): T | undefined => {
  try {
    return parse();
  } catch (error) {
    if (!(error instanceof RateSyntaxError)) throw error;
    errors.push(at(source, node, error.message));
    return undefined;
  }
};

const readFollow = (source: YamlSource, node: { key: unknown; value: unknown }, errors: string[]): BudgetSpec['follow'] => {
  const map = asMap(node.value);
  if (!map) {
    errors.push(at(source, node.value ?? node.key, 'total.follow: expected a mapping { group, maxLag }'));
    return undefined;
  }
  const fields = fieldsOf(source, map, 'total.follow', FOLLOW_KEYS, errors);
  const group = fields.get('group');
  const groupValue = group && toPlain(source, group.value);
  if (typeof groupValue !== 'string' || groupValue.trim() === '') {
    errors.push(at(source, group?.value ?? node.key, `total.follow.group: expected the downstream consumer group's name, got ${JSON.stringify(groupValue ?? null)}`));
  }
  const maxLag = fields.get('maxLag');
  if (!maxLag) errors.push(at(source, node.key, 'total.follow.maxLag: required (a count of messages such as 10000, or a duration of the budget\'s rate such as 30s)'));
  const lag = maxLag && parsed(source, maxLag.value, errors, () => parseQueue(toPlain(source, maxLag.value), 'total.follow.maxLag'));
  if (typeof groupValue !== 'string' || groupValue.trim() === '' || !lag || !maxLag) return undefined;
  return { group: groupValue.trim(), maxLag: lag, maxLagLabel: String(toPlain(source, maxLag.value)) };
};

/** The budget, or undefined with errors pushed. */
export const readTotal = (source: YamlSource, node: { key: unknown; value: unknown }, errors: string[]): BudgetSpec | undefined => {
  const map = asMap(node.value);
  if (!map) {
    errors.push(at(source, node.value ?? node.key, 'total: expected a mapping such as { rate: 2000/s }'));
    return undefined;
  }
  const before = errors.length;
  const fields = fieldsOf(source, map, 'total', TOTAL_KEYS, errors);
  const rate = fields.get('rate');
  if (!rate) errors.push(at(source, node.key, 'total.rate: required, e.g. "2000/s"'));
  const rateText = rate && toPlain(source, rate.value);
  const parsedRate = rate && parsed(source, rate.value, errors, () => parseRate(rateText, 'total.rate'));
  const bytes = fields.get('bytes');
  const bytesText = bytes && toPlain(source, bytes.value);
  const parsedBytes = bytes && parsed(source, bytes.value, errors, () => parseByteRate(bytesText, 'total.bytes'));
  const followNode = fields.get('follow');
  const follow = followNode ? readFollow(source, followNode, errors) : undefined;
  if (errors.length > before || !parsedRate) return undefined;
  return {
    rate: (parsedRate.count * 1000) / parsedRate.perMs,
    rateLabel: String(rateText).trim(),
    ...(parsedBytes ? { bytes: (parsedBytes.count * 1000) / parsedBytes.perMs, bytesLabel: String(bytesText).trim() } : {}),
    ...(follow ? { follow } : {}),
  };
};
