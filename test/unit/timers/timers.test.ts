import { once } from 'node:events';
import net, { type AddressInfo } from 'node:net';
import { clampDelay, MAX_TIMER_MS, setRepeating, setTimer, setTimerAfterIo, type Timer } from '../../../src/timers';

const DAY_MS = 86_400_000;

describe('clampDelay', () => {
  it('keeps a delay setTimeout holds, and cuts a longer one to MAX_TIMER_MS', () => {
    expect(clampDelay(250)).toBe(250);
    expect(clampDelay(MAX_TIMER_MS)).toBe(MAX_TIMER_MS);
    expect(clampDelay(MAX_TIMER_MS + 1)).toBe(MAX_TIMER_MS);
    expect(clampDelay(Infinity)).toBe(MAX_TIMER_MS);
  });

  it('reads a past deadline or NaN as now', () => {
    expect(clampDelay(-5)).toBe(0);
    expect(clampDelay(NaN)).toBe(0);
  });
});

describe('when a deadline lies beyond what setTimeout holds', () => {
  afterEach(() => jest.useRealTimers());

  it('does not fire in the first milliseconds (a real wait: Node fires such a setTimeout after 1 ms)', async () => {
    const fired = jest.fn();
    const timer = setTimer(fired, MAX_TIMER_MS + 1);
    await new Promise((resolve) => setTimeout(resolve, 30));
    timer.clear();
    expect(fired).not.toHaveBeenCalled();
  });

  it('re-arms at MAX_TIMER_MS and fires once, at the deadline', () => {
    jest.useFakeTimers();
    const fired = jest.fn();
    setTimer(fired, 30 * DAY_MS);
    jest.advanceTimersByTime(10);
    expect(fired).not.toHaveBeenCalled();
    jest.advanceTimersByTime(MAX_TIMER_MS);
    expect(fired).not.toHaveBeenCalled();
    expect(jest.getTimerCount()).toBe(1); // armed again for the rest
    jest.advanceTimersByTime(30 * DAY_MS - MAX_TIMER_MS - 10 - 1);
    expect(fired).not.toHaveBeenCalled();
    jest.advanceTimersByTime(1);
    expect(fired).toHaveBeenCalledTimes(1);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('never fires for an infinite delay, and stops when cleared', () => {
    jest.useFakeTimers();
    const fired = jest.fn();
    const never = setTimer(fired, Infinity);
    jest.advanceTimersByTime(3 * MAX_TIMER_MS);
    expect(fired).not.toHaveBeenCalled();
    never.clear();
    expect(jest.getTimerCount()).toBe(0);
  });

  it('keeps a re-armed timer unref\'d', () => {
    jest.useFakeTimers();
    const timer = setTimer(() => undefined, 2 * MAX_TIMER_MS).unref();
    const unref = jest.spyOn(global, 'setTimeout');
    jest.advanceTimersByTime(MAX_TIMER_MS);
    const rearmed = unref.mock.results[0].value as NodeJS.Timeout;
    expect(rearmed.hasRef()).toBe(false);
    timer.clear();
    unref.mockRestore();
  });
});

describe('when a short delay is asked for', () => {
  afterEach(() => jest.useRealTimers());

  it('fires once after it, a past deadline at once', () => {
    jest.useFakeTimers();
    const fired = jest.fn();
    setTimer(fired, 100);
    setTimer(fired, -20);
    jest.advanceTimersByTime(0);
    expect(fired).toHaveBeenCalledTimes(1);
    jest.advanceTimersByTime(100);
    expect(fired).toHaveBeenCalledTimes(2);
  });
});

describe('setRepeating', () => {
  afterEach(() => jest.useRealTimers());

  it('repeats at its interval', () => {
    jest.useFakeTimers();
    const fired = jest.fn();
    const timer = setRepeating(fired, 200);
    jest.advanceTimersByTime(1000);
    expect(fired).toHaveBeenCalledTimes(5);
    timer.clear();
    jest.advanceTimersByTime(1000);
    expect(fired).toHaveBeenCalledTimes(5);
  });

  it('repeats an interval beyond MAX_TIMER_MS at that interval, not every millisecond', () => {
    jest.useFakeTimers();
    const fired = jest.fn();
    const timer = setRepeating(fired, 30 * DAY_MS);
    jest.advanceTimersByTime(30 * DAY_MS - 1);
    expect(fired).not.toHaveBeenCalled();
    jest.advanceTimersByTime(1);
    expect(fired).toHaveBeenCalledTimes(1);
    jest.advanceTimersByTime(30 * DAY_MS);
    expect(fired).toHaveBeenCalledTimes(2);
    timer.clear();
    expect(jest.getTimerCount()).toBe(0);
  });
});

describe('when the event loop was blocked past a timer that gives up waiting for an answer (a stopped process, a long task)', () => {
  const busyFor = (ms: number): void => {
    const until = Date.now() + ms;
    while (Date.now() < until) {
      // blocked, as a process stopped by SIGSTOP finds itself when it goes on
    }
  };

  /**
   * A loopback server that, at each question, arms the 50 ms timer, answers, and blocks the loop
   * for 100 ms: the answer is in the client's socket when the loop goes on, the timer long past.
   * What came first: the answer read, or the timer.
   */
  const firstOf = async (arm: (callback: () => void, ms: number) => Timer): Promise<string[]> => {
    const seen: string[] = [];
    let timer: Timer | undefined;
    const server = net.createServer((socket) => socket.on('data', () => {
      timer = arm(() => void seen.push('timer'), 50);
      socket.write('answer');
      busyFor(100);
    }));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const client = net.connect((server.address() as AddressInfo).port, '127.0.0.1');
    try {
      await once(client, 'connect');
      const answered = once(client, 'data').then(() => void seen.push('answer'));
      client.write('question');
      await answered;
      await new Promise((resolve) => setTimeout(resolve, 10));
      return seen;
    } finally {
      timer?.clear();
      client.destroy();
      server.close();
    }
  };

  it('setTimer fires before the answer already there is read', async () => {
    expect(await firstOf(setTimer)).toEqual(['timer', 'answer']);
  });

  it('setTimerAfterIo reads it first, then fires', async () => {
    expect(await firstOf(setTimerAfterIo)).toEqual(['answer', 'timer']);
  });

  it('setTimerAfterIo fires after its delay when nothing comes, and not once cleared', async () => {
    const fired = jest.fn();
    const started = Date.now();
    setTimerAfterIo(fired, 30);
    const cleared = jest.fn();
    setTimerAfterIo(cleared, 30).clear();
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(fired).toHaveBeenCalledTimes(1);
    expect(cleared).not.toHaveBeenCalled();
    expect(Date.now() - started).toBeGreaterThanOrEqual(30);
  });
});
