/** The quota file compiled: rules in force, indexed for matching a producer id. */
import type { LRUCache } from 'lru-cache';
import type { RuleSpec } from '../limit/compile-rule';
import type { LimitRule } from '../limit/types';
import type { GlobMatcher } from './glob';

/** What a producer is held to: the rule's name (its pattern, or "default") and its limit. */
export interface ResolvedRule {
  readonly name: string;
  readonly unlimited: boolean;
  readonly shadow: boolean;
  /** Undefined when unlimited: such producers never touch the store. */
  readonly limit?: LimitRule;
  /** Its part of a contended downstream budget (`weight`, default 1) and its guaranteed `min` (messages/s, 0: none). */
  readonly weight?: number;
  readonly minRate?: number;
}

/** The quota file's `total:`: a budget for everything forwarded downstream (src/budget). */
export interface BudgetSpec {
  /** Messages per second, and as written. */
  readonly rate: number;
  readonly rateLabel: string;
  /** Bytes per second, and as written. */
  readonly bytes?: number;
  readonly bytesLabel?: string;
  readonly follow?: {
    readonly group: string;
    readonly maxLag: { kind: 'duration'; ms: number } | { kind: 'count'; messages: number };
    readonly maxLagLabel: string;
  };
}

export type EntryKind = 'exact' | 'glob' | 'default';

/** One rule of the file with every field it inherited, as written, for display. */
export interface QuotaEntry {
  readonly pattern: string;
  readonly kind: EntryKind;
  /** Line of the rule's key in the file. */
  readonly line: number;
  readonly spec: Readonly<Partial<RuleSpec>>;
  readonly resolved: ResolvedRule;
}

export interface GlobEntry {
  /** Whether an id matches the glob (linear in the id: glob.ts). */
  readonly matches: GlobMatcher;
  /** Characters other than `*`: the longer, the more specific. */
  readonly literalLength: number;
  readonly order: number;
  readonly resolved: ResolvedRule;
}

export interface QuotaRules {
  readonly file: string;
  /** sha256 of the file's text: the watcher reloads only when it changes. */
  readonly digest: string;
  /** In precedence order: exact ids (file order), globs (longest first, then file order), default. */
  readonly entries: readonly QuotaEntry[];
  readonly default: ResolvedRule;
  readonly exact: ReadonlyMap<string, ResolvedRule>;
  readonly globs: readonly GlobEntry[];
  /** The downstream budget, when the file has `total:`. */
  readonly total?: BudgetSpec;
  /** Producer id → rule, bounded; filled by resolveRule. */
  readonly cache: LRUCache<string, ResolvedRule>;
}
