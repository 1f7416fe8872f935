/**
 * Matching a producer id to its rule: exact id, then the longest matching glob (most
 * characters other than `*`), then the earliest in the file, then default. Producers are
 * many and patterns few, so results are cached per id in an LRU (lru-cache): a flood of one-off
 * ids cycles through it while the busy producers stay.
 */
import { LRUCache } from 'lru-cache';
import type { RuleSpec } from '../limit/compile-rule';
import { compileGlob, isGlob, literalLength } from './glob';
import type { GlobEntry, QuotaEntry, QuotaRules, ResolvedRule } from './types';

/** Most producer ids remembered per rule set; past it the least recently resolved are forgotten. */
export const RESOLVE_CACHE_SIZE = 100_000;

export interface IndexEntry {
  pattern: string;
  line: number;
  order: number;
  spec: Partial<RuleSpec>;
  resolved: ResolvedRule;
  isDefault: boolean;
}

const freezeResolved = (r: ResolvedRule): ResolvedRule => Object.freeze({ ...r });

/** Builds the lookup structures from compiled entries (file order, default last). */
export const buildIndex = (file: string, digest: string, compiled: IndexEntry[]): QuotaRules => {
  const entries = compiled.map((e) => ({ ...e, resolved: freezeResolved(e.resolved) }));
  const exact = entries.filter((e) => !e.isDefault && !isGlob(e.pattern));
  const globs: GlobEntry[] = entries
    .filter((e) => !e.isDefault && isGlob(e.pattern))
    .map((e) => ({ matches: compileGlob(e.pattern), literalLength: literalLength(e.pattern), order: e.order, resolved: e.resolved }))
    .sort((a, b) => b.literalLength - a.literalLength || a.order - b.order);
  const base = entries.find((e) => e.isDefault) as IndexEntry;
  const byGlobOrder = (e: IndexEntry) => globs.findIndex((g) => g.resolved === e.resolved);
  const toEntry = (kind: QuotaEntry['kind']) => (e: IndexEntry): QuotaEntry =>
    Object.freeze({ pattern: e.pattern, kind, line: e.line, spec: Object.freeze({ ...e.spec }), resolved: e.resolved });
  return {
    file,
    digest,
    entries: Object.freeze([
      ...exact.map(toEntry('exact')),
      ...entries.filter((e) => !e.isDefault && isGlob(e.pattern)).sort((a, b) => byGlobOrder(a) - byGlobOrder(b)).map(toEntry('glob')),
      toEntry('default')(base),
    ]),
    default: base.resolved,
    exact: new Map(exact.map((e) => [e.pattern, e.resolved])),
    globs: Object.freeze(globs),
    cache: new LRUCache<string, ResolvedRule>({ max: RESOLVE_CACHE_SIZE }),
  };
};

const match = (rules: QuotaRules, producerId: string): ResolvedRule =>
  rules.exact.get(producerId) ?? rules.globs.find((g) => g.matches(producerId))?.resolved ?? rules.default;

/** The rule a producer is held to. Pure in effect: the cache only remembers earlier answers. */
export const resolveRule = (rules: QuotaRules, producerId: string): ResolvedRule => {
  const cached = rules.cache.get(producerId);
  if (cached) return cached;
  const resolved = match(rules, producerId);
  rules.cache.set(producerId, resolved);
  return resolved;
};
