/**
 * The glob as the backtracking regex sluice used to compile it to: `^a.*b.*c$`, `s` flag, every
 * other character literal. Exponential on long ids that do not match, so an oracle for short
 * ones only.
 */
export const globRegexOracle = (pattern: string): RegExp =>
  new RegExp(`^${pattern.split('*').map((part) => part.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('.*')}$`, 's');
