/**
 * How long a Redis call may take, judged on Redis and not on the event loop. ioredis
 * auto-pipelining writes a command in the next check phase (its flush is a setImmediate queued
 * when the command was), and Node runs expired timers before it reads the socket: a timer
 * started at queueing fires whenever the loop was busy for timeoutMs (decoding one large fetch
 * is enough), before the command was even written or before an answer already in the socket is
 * read. So the clock starts in a setImmediate queued after ioredis's flush, and at expiry the
 * poll phase gets one more turn (setImmediate) before the call is failed.
 */
import { setTimer, type Timer } from '../timers';

/** Resolves or rejects like `call`, or rejects with "no answer within timeoutMs ms". */
export const answerWithin = <T>(call: Promise<T>, timeoutMs: number): Promise<T> => {
  let timer: Timer | undefined;
  let settled = false;
  const timeout = new Promise<never>((_resolve, reject) => {
    setImmediate(() => {
      if (settled) return;
      timer = setTimer(() => setImmediate(() => reject(new Error(`no answer within ${timeoutMs} ms`))), timeoutMs);
    });
  });
  const clear = (): void => {
    settled = true;
    timer?.clear();
  };
  return Promise.race([call, timeout]).finally(clear);
};
