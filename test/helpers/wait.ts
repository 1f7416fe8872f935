/**
 * Waiting on conditions instead of sleeping: `waitFor(condition, { timeoutMs, intervalMs, message })`
 * polls `condition` until it returns a truthy value (which it resolves with) or the deadline passes
 * (then it throws, naming `message` and the condition's last error, if any).
 */
export interface WaitOptions {
  timeoutMs?: number; // default 30 s
  intervalMs?: number; // default 100 ms
  message?: string | (() => string); // what we were waiting for, for the error (a function: read at the deadline)
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export const waitFor = async <T>(
  condition: () => T | Promise<T>,
  { timeoutMs = 30_000, intervalMs = 100, message = 'a condition' }: WaitOptions = {},
): Promise<NonNullable<T>> => {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await condition();
      if (value) return value as NonNullable<T>;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() >= deadline) {
      const cause = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
      const what = typeof message === 'function' ? message() : message;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${cause}`);
    }
    await sleep(intervalMs);
  }
};
