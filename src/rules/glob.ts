/** Quota globs: `*` matches any characters, dots and slashes included; nothing else is special. */

export const isGlob = (pattern: string): boolean => pattern.includes('*');

/** An anchored regex for a glob: "batch-*" → /^batch-.*$/s. */
export const globToRegex = (pattern: string): RegExp =>
  new RegExp(`^${pattern.split('*').map((part) => part.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('.*')}$`, 's');

/** How specific a glob is: its characters other than `*`. */
export const literalLength = (pattern: string): number => pattern.replace(/\*/g, '').length;
