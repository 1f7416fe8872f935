/**
 * Timers for delays computed from data or settings. Node keeps a delay in a signed 32-bit
 * integer: past MAX_TIMER_MS (about 24.8 days) it warns and fires after 1 ms, so a far-future
 * deadline would act at once — and a timer that re-arms on its deadline would fire every
 * millisecond. Here a longer delay waits in steps of at most MAX_TIMER_MS and acts only at its
 * end; an infinite one never acts.
 */

/** The longest delay setTimeout holds (2^31 − 1 ms). */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * A delay setTimeout holds as given: at most MAX_TIMER_MS, negative or NaN as 0. Only for a
 * callback that checks its own deadline and re-arms when it fired before it.
 */
export const clampDelay = (ms: number): number => (ms > 0 ? Math.min(ms, MAX_TIMER_MS) : 0);

export interface Timer {
  clear(): void;
  /** Lets the process exit while only this timer is waiting (like Node's `unref`). */
  unref(): Timer;
}

/** Calls `callback` once `delayMs` have passed (negative or NaN: at once; Infinity: never). */
export const setTimer = (callback: () => void, delayMs: number): Timer => {
  let rest = delayMs > 0 ? delayMs : 0;
  let unref = false;
  let handle: NodeJS.Timeout;
  const arm = (): void => {
    const step = Math.min(rest, MAX_TIMER_MS);
    rest -= step;
    handle = setTimeout(rest > 0 ? arm : callback, step);
    if (unref) handle.unref();
  };
  arm();
  const timer: Timer = {
    clear: () => clearTimeout(handle),
    unref() {
      unref = true;
      handle.unref();
      return timer;
    },
  };
  return timer;
};

/**
 * As setTimer, for a timer that gives up waiting for an answer: at its end the event loop first
 * reads what came in meanwhile (one setImmediate), then `callback` runs. Node runs expired timers
 * before it polls its sockets, so after the loop was blocked past the delay (a long task; a
 * process stopped by SIGSTOP or a long GC pause) a plain timer fires before the answers already
 * there are read, and gives up on what had in fact come.
 */
export const setTimerAfterIo = (callback: () => void, delayMs: number): Timer => {
  let unref = false;
  let immediate: NodeJS.Immediate | undefined;
  const timer = setTimer(() => {
    immediate = setImmediate(callback);
    if (unref) immediate.unref();
  }, delayMs);
  const afterIo: Timer = {
    clear() {
      timer.clear();
      if (immediate) clearImmediate(immediate);
    },
    unref() {
      unref = true;
      timer.unref();
      immediate?.unref();
      return afterIo;
    },
  };
  return afterIo;
};

/** Calls `callback` every `intervalMs` (beyond MAX_TIMER_MS too) until cleared. */
export const setRepeating = (callback: () => void, intervalMs: number): Timer => {
  if (!(intervalMs > MAX_TIMER_MS)) {
    const handle = setInterval(callback, intervalMs);
    const interval: Timer = { clear: () => clearInterval(handle), unref: () => (handle.unref(), interval) };
    return interval;
  }
  let unref = false;
  let current: Timer;
  const next = (): void => {
    current = setTimer(() => {
      next();
      callback();
    }, intervalMs);
    if (unref) current.unref();
  };
  next();
  const repeating: Timer = {
    clear: () => current.clear(),
    unref() {
      unref = true;
      current.unref();
      return repeating;
    },
  };
  return repeating;
};
