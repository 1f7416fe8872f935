import { createHash } from 'node:crypto';
import type { LimitRule } from './types';

/** A short digest of every number of a rule: state written under another fingerprint restarts its tail. */
export const fingerprintOf = (rule: Omit<LimitRule, 'fingerprint' | 'labels'> & { labels?: unknown }): string => {
  const numbers = [
    rule.algorithm,
    rule.intervalMs,
    rule.capacityMs,
    rule.burst,
    rule.byteIntervalMs ?? '',
    ...rule.windows.map((w) => `${w.max}/${w.windowMs}/${w.kind}`),
  ].join('|');
  return createHash('sha1').update(numbers).digest('base64url').slice(0, 8);
};
