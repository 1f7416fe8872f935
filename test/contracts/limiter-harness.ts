/** What the limiter conformance suite needs from a store under test, and shared helpers. */
import { compileRule, type RuleSpec } from '../../src/limit/compile-rule';
import type { Decision, LimiterStore, LimitRule } from '../../src/limit/types';

export interface StoreUnderTest {
  store: LimiterStore;
  /** ms after `now` until the producer's state is forgotten; undefined when none is held. */
  forgetsAfter(producer: string, now: number): Promise<number | undefined>;
}

/** Returns a store with a namespace of its own (a fresh key prefix, or a fresh memory store). */
export type StoreFactory = () => Promise<StoreUnderTest>;

/** A UTC day boundary, so fixed windows of s, m, h and d all start here. */
export const T0 = 1_699_920_000_000;

export const rule = (spec: RuleSpec): LimitRule => {
  const result = compileRule(spec);
  if (!result.ok) throw new Error(`test rule does not compile: ${JSON.stringify(result.errors)}`);
  return result.rule;
};

export const ones = (k: number): number[] => Array.from({ length: k }, () => 1);

/** Decisions as compact strings relative to T0: "+100" admitted at T0 + 100, "x+200 rate" refused. */
export const brief = (decisions: Decision[], base = T0): string[] =>
  decisions.map((d) => (d.admitted ? `+${d.at - base}` : `x+${d.at - base} ${d.reason}`));
