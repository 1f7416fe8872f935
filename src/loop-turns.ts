/**
 * Whether this process's event loop has gone too long without a turn. kafkajs hands the batches
 * of a fetch to the handlers in microtasks, one after another, and a handler reads and hands
 * over its batch without waiting (but for the store): taken at once, the batches of a fetch of
 * 1 KiB records kept every timer waiting 150–480 ms at a time with one replica parking 2,000
 * msg/s (the bench's accuracy phase, bench/HISTORY.md), and the hold's releases due meanwhile
 * left late. A long batch asks `due()` every LOOK_EVERY messages and, when it is, lets the loop
 * turn (`turn()`: timers, answers) before going on; a loop that turns often is never held up.
 */

/** Work longer than this without a turn of the loop lets it turn. */
export const TURN_MS = 20;
/** A batch asks every this many messages. */
export const LOOK_EVERY = 64;

export interface LoopTurns {
  /** The loop has not turned for more than TURN_MS (counted from the first question since its last turn). */
  due(): boolean;
  /** Resolves once the loop has turned. */
  turn(): Promise<void>;
}

export const createLoopTurns = (now: () => number = () => performance.now(), turnMs = TURN_MS): LoopTurns => {
  let since = 0;
  let watching = false;
  const turned = (): void => {
    watching = false;
  };
  return {
    due() {
      if (!watching) {
        // The first question since the last turn: count from now, and learn of the next turn.
        watching = true;
        since = now();
        setImmediate(turned);
        return false;
      }
      return now() - since > turnMs;
    },
    turn: () => new Promise((resolve) => setImmediate(resolve)),
  };
};

/** The process's one event loop, asked by every flow. */
export const loopTurns: LoopTurns = createLoopTurns();
