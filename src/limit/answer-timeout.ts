/**
 * How long a Redis call may take, judged on Redis and not on the event loop. Three things
 * would make a plain timer lie:
 * - ioredis's auto-pipelining writes a command in the next check phase (its flush is a
 *   setImmediate queued when the command was), so a clock started at queueing counts the
 *   loop's work before the write;
 * - it keeps one automatic pipeline in flight per connection: a command queued while one waits
 *   is written only when that one's answers are in (ioredis's autoPipelining.js), so its clock
 *   must start then, not when it was queued;
 * - Node runs expired timers before it reads the socket: after the loop was busy for timeoutMs
 *   (decoding one large fetch is enough) a timer fires even though the answer is already there.
 * So calls go in groups as ioredis writes them: the calls queued while nothing is in flight
 * start their clocks in a setImmediate queued after ioredis's flush; the calls queued while a
 * group is in flight start theirs when every call of that group has settled (answered, failed
 * or timed out: a stalled Redis still fails each later group within timeoutMs of the one before);
 * and at expiry the poll phase gets one more turn (setTimerAfterIo) before the call is failed.
 * One clock per connection's user (the store). With a Redis Cluster, ioredis keeps one pipeline
 * per node and this clock one for all: a call may start its clock later than its write, never
 * earlier (a stall is then noticed within at most twice timeoutMs).
 */
import { setTimerAfterIo, type Timer } from '../timers';

export interface AnswerClock {
  /** Resolves or rejects like `call`, or rejects with "no answer within timeoutMs ms". */
  within<T>(call: Promise<T>): Promise<T>;
}

export const createAnswerClock = (timeoutMs: number): AnswerClock => {
  /** Calls of the group ioredis has written (or writes at this tick's flush) not yet settled. */
  let inFlight = 0;
  /** True from a group's first call until the check phase that flushes it. */
  let forming = false;
  /** The calls queued behind the group in flight (the next group): each boards it, false when already settled. */
  let queued: Array<() => boolean> = [];
  const endForming = (): void => {
    forming = false;
  };

  const settled = (): void => {
    inFlight -= 1;
    // ioredis writes the queued calls as the group before them is answered: their clocks start now.
    while (inFlight === 0 && queued.length > 0) {
      const boarding = queued;
      queued = [];
      for (const board of boarding) if (board()) inFlight += 1;
    }
  };

  const within = <T>(call: Promise<T>): Promise<T> => {
    let timer: Timer | undefined;
    let done = false;
    let counted = false;
    const timeout = new Promise<never>((_resolve, reject) => {
      const fail = (): void => reject(new Error(`no answer within ${timeoutMs} ms`));
      const startClock = (): void => {
        if (!done) timer = setTimerAfterIo(fail, timeoutMs);
      };
      if (inFlight === 0 && queued.length === 0 && !forming) {
        forming = true;
        setImmediate(endForming);
      }
      if (forming) {
        inFlight += 1;
        counted = true;
        setImmediate(startClock);
      } else {
        queued.push(() => {
          if (done) return false;
          counted = true;
          startClock();
          return true;
        });
      }
    });
    const finish = (): void => {
      done = true;
      timer?.clear();
      if (counted) settled();
    };
    return Promise.race([call, timeout]).finally(finish);
  };

  return { within };
};
