/**
 * The V8 flags the sidecar sets for itself before its hot code is compiled (src/main.ts).
 *
 * A cold sidecar compiles about twice the code a bare kafkajs pipe does in its first seconds,
 * on the same two cores as the broker: with V8's default inlining budget its largest hot
 * functions (the dispatcher's, the batch reader's) are compiled with most of what they call
 * inlined, and compiled again after each deoptimization. Half the budget compiled 2–31 % less
 * (TurboFan's milliseconds a run, 16 % at the median of nine A/B runs) and left the warmed-up
 * rate as it was (bench/HISTORY.md, "Half V8's inlining budget"). A value the user gives node
 * (`node --max-inlined-bytecode-size-cumulative=N dist/main.js`) is theirs: it is kept.
 */

/** TurboFan's budget of bytecode inlined into one function: half V8's default of 920. */
export const INLINING_FLAG = '--max-inlined-bytecode-size-cumulative=460';

/** The flags to set, given node's own arguments (`process.execArgv`; NODE_OPTIONS cannot carry this one). */
export const ownV8Flags = (execArgv: readonly string[]): string[] => {
  const name = INLINING_FLAG.slice(0, INLINING_FLAG.indexOf('='));
  // V8 reads `_` and `-` in a flag's name alike.
  return execArgv.some((arg) => arg.replace(/_/g, '-').startsWith(name)) ? [] : [INLINING_FLAG];
};
