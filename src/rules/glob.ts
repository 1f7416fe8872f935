/**
 * Quota globs: `*` matches any characters, dots and slashes included; nothing else is special.
 * Matching is case-sensitive and anchored at both ends.
 *
 * Linear in the id, whatever the pattern: a backtracking regex `^a.*b.*c$` retried every split
 * of an id that does not match (a ten-star glob against a 200-character id took seconds). Here
 * the first segment is a prefix, the last a suffix, and each one between is found with
 * `indexOf` left to right after the previous: the leftmost place of each is never worse for
 * the rest, so no choice is ever taken back. At most O(id length × pattern length).
 */

export const isGlob = (pattern: string): boolean => pattern.includes('*');

/** Whether a producer id matches a glob. */
export type GlobMatcher = (id: string) => boolean;

/** The matcher of one glob, its segments split once: "batch-*" → id starts with "batch-". */
export const compileGlob = (pattern: string): GlobMatcher => {
  const segments = pattern.split('*');
  if (segments.length === 1) return (id) => id === pattern;
  const first = segments[0];
  const last = segments[segments.length - 1];
  const middle = segments.slice(1, -1).filter((segment) => segment.length > 0);
  const fixed = first.length + last.length;
  return (id) => {
    if (id.length < fixed || !id.startsWith(first) || !id.endsWith(last)) return false;
    const end = id.length - last.length;
    let from = first.length;
    for (const segment of middle) {
      const at = id.indexOf(segment, from);
      if (at < 0 || at + segment.length > end) return false;
      from = at + segment.length;
    }
    return true;
  };
};

/** How specific a glob is: its characters other than `*`. */
export const literalLength = (pattern: string): number => pattern.replace(/\*/g, '').length;
