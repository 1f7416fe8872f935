import { answerWithin } from '../../../src/limit/answer-timeout';

const busyFor = (ms: number): void => {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // the event loop is busy, as while decoding a large fetch
  }
};

/** Like an auto-pipelined ioredis command: written in the next check phase, answered `answerMs` later. */
const pipelined = (answerMs: number, busyMs = 0): Promise<string> =>
  new Promise((resolve) =>
    setImmediate(() => {
      busyFor(busyMs);
      setTimeout(() => resolve('answer'), answerMs);
    }),
  );

describe('when a call is judged against timeoutMs', () => {
  it('resolves with an answer that comes in time', async () => {
    await expect(answerWithin(pipelined(5), 100)).resolves.toBe('answer');
  });

  it('does not count the time the event loop was busy before the command was written', async () => {
    await expect(answerWithin(pipelined(10, 120), 60)).resolves.toBe('answer');
  });

  it('fails a call that never answers after about timeoutMs', async () => {
    const started = Date.now();
    await expect(answerWithin(new Promise<never>(() => undefined), 50)).rejects.toThrow('no answer within 50 ms');
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(45);
    expect(elapsed).toBeLessThan(500);
  });

  it('passes on the failure of a call that fails', async () => {
    await expect(answerWithin(Promise.reject(new Error('connection closed')), 50)).rejects.toThrow('connection closed');
  });
});
