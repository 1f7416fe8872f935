import { createAnswerClock } from '../../../src/limit/answer-timeout';

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

/** Like a command ioredis queued behind the automatic pipeline in flight: written once `ahead` is answered. */
const queuedBehind = (ahead: Promise<unknown>, answerMs: number): Promise<string> =>
  ahead.then(
    () => new Promise((resolve) => setTimeout(() => resolve('answer'), answerMs)),
    () => new Promise(() => undefined),
  );

const nextCheckPhase = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

const never = (): Promise<never> => new Promise<never>(() => undefined);

describe('when a call is judged against timeoutMs', () => {
  it('resolves with an answer that comes in time', async () => {
    await expect(createAnswerClock(100).within(pipelined(5))).resolves.toBe('answer');
  });

  it('does not count the time the event loop was busy before the command was written', async () => {
    await expect(createAnswerClock(60).within(pipelined(10, 120))).resolves.toBe('answer');
  });

  it('fails a call that never answers after about timeoutMs', async () => {
    const started = Date.now();
    await expect(createAnswerClock(50).within(never())).rejects.toThrow('no answer within 50 ms');
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(45);
    expect(elapsed).toBeLessThan(500);
  });

  it('passes on the failure of a call that fails', async () => {
    await expect(createAnswerClock(50).within(Promise.reject(new Error('connection closed')))).rejects.toThrow('connection closed');
  });
});

describe('when calls wait behind an automatic pipeline in flight', () => {
  it('starts the clock of a call queued behind it when that one is answered, not when it was queued', async () => {
    const answers = createAnswerClock(50);
    const ahead = pipelined(40);
    const first = answers.within(ahead);
    await nextCheckPhase();
    // queued at ~0 ms, written at ~40 ms, answered at ~70 ms: 30 ms after its write
    const second = answers.within(queuedBehind(ahead, 30));
    await expect(first).resolves.toBe('answer');
    await expect(second).resolves.toBe('answer');
  });

  it('does not fail a queued call because the event loop was busy while the one ahead was answered', async () => {
    const answers = createAnswerClock(50);
    const ahead = pipelined(5);
    const first = answers.within(ahead);
    await nextCheckPhase();
    const second = answers.within(queuedBehind(ahead, 5));
    await nextCheckPhase();
    busyFor(120); // the answer ahead is due meanwhile and read after the stall

    await expect(first).resolves.toBe('answer');
    await expect(second).resolves.toBe('answer');
  });

  it('still fails each group of a stalled Redis, a queued one within timeoutMs of the one before', async () => {
    const answers = createAnswerClock(50);
    const started = Date.now();
    const first = answers.within(never());
    await nextCheckPhase();
    const second = answers.within(never());
    await expect(first).rejects.toThrow('no answer within 50 ms');
    const firstFailed = Date.now() - started;
    await expect(second).rejects.toThrow('no answer within 50 ms');
    const secondFailed = Date.now() - started;
    expect(firstFailed).toBeGreaterThanOrEqual(45);
    expect(secondFailed - firstFailed).toBeGreaterThanOrEqual(45);
    expect(secondFailed).toBeLessThan(1000);
  });

  it('counts calls queued in one tick as one group, and a call that failed while queued as nothing', async () => {
    const answers = createAnswerClock(50);
    const first = answers.within(never());
    const sameTick = answers.within(never());
    await nextCheckPhase();
    const failedWhileQueued = answers.within(Promise.reject(new Error('connection closed')));
    await expect(failedWhileQueued).rejects.toThrow('connection closed');
    const started = Date.now();
    const [a, b] = await Promise.all([first.catch(() => Date.now()), sameTick.catch(() => Date.now())]);
    expect(Math.abs(a - b)).toBeLessThan(30);
    expect(Math.max(a, b) - started).toBeLessThan(500);
    // nothing is left in flight: a new call forms its own group and is answered
    await expect(answers.within(pipelined(5))).resolves.toBe('answer');
  });
});
