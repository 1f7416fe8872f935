import { manualClock, systemClock } from '../../../src/clock';
import { createHoldScheduler, type HoldScheduler, LATE_HOLD_MS, RELEASE_LATE_MS, YIELD_SHARE } from '../../../src/hold/hold-scheduler';

const until = async (condition: () => boolean, ms = 2000): Promise<void> => {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 5));
  }
};

describe('when messages are held with release instants', () => {
  it('releases each at or after its instant, in instant order, ties in arrival order', async () => {
    const hold = createHoldScheduler({ clock: systemClock, maxMessages: 100, maxBytes: 1e6 });
    const t0 = Date.now();
    const released: { id: string; at: number; when: number }[] = [];
    const add = (id: string, delay: number): void => {
      const at = t0 + delay;
      hold.add({ at, bytes: 1, release: () => released.push({ id, at, when: Date.now() }), evict: () => undefined });
    };
    add('c', 60);
    add('a', 20);
    add('b1', 40);
    add('b2', 40);
    await until(() => released.length === 4);
    expect(released.map((r) => r.id)).toEqual(['a', 'b1', 'b2', 'c']);
    for (const r of released) expect(r.when).toBeGreaterThanOrEqual(r.at);
    hold.close();
  });
});

describe('when the held messages reach the cap', () => {
  it('signals pressure, and signals relief once below 80% of the cap', async () => {
    const signals: boolean[] = [];
    const hold = createHoldScheduler({ clock: systemClock, maxMessages: 5, maxBytes: 1e6, onPressure: (full) => signals.push(full) });
    const now = Date.now();
    for (let i = 0; i < 5; i += 1) hold.add({ at: now + 10 + i * 10, bytes: 1, release: () => undefined, evict: () => undefined });
    expect(signals).toEqual([true]);
    expect(hold.isFull()).toBe(true);
    await until(() => signals.length === 2);
    expect(signals).toEqual([true, false]);
    expect(hold.held().messages).toBeLessThan(4);
    hold.close();
  });

  it('counts bytes against the byte cap', () => {
    const signals: boolean[] = [];
    const hold = createHoldScheduler({ clock: systemClock, maxMessages: 100, maxBytes: 1000, onPressure: (full) => signals.push(full) });
    hold.add({ at: Date.now() + 10_000, bytes: 1000, release: () => undefined, evict: () => undefined });
    expect(signals).toEqual([true]);
    hold.close();
  });
});

describe('when shutting down with messages held past the deadline', () => {
  it('hands back the later ones in release order and keeps releasing the earlier ones', async () => {
    const hold = createHoldScheduler({ clock: systemClock, maxMessages: 100, maxBytes: 1e6 });
    const now = Date.now();
    const released: string[] = [];
    hold.add({ at: now + 5000, bytes: 1, release: () => released.push('late2'), evict: () => undefined });
    hold.add({ at: now + 20, bytes: 1, release: () => released.push('soon'), evict: () => undefined });
    hold.add({ at: now + 4000, bytes: 1, release: () => released.push('late1'), evict: () => undefined });
    expect(hold.latest()).toBe(now + 5000);
    const taken = hold.takeLaterThan(now + 1000);
    expect(taken.map((t) => t.at)).toEqual([now + 4000, now + 5000]);
    await hold.whenEmpty();
    expect(released).toEqual(['soon']);
    hold.close();
  });
});

describe('when messages are sent at once without being held', () => {
  it('counts them against both caps until each is acknowledged, once', () => {
    const signals: boolean[] = [];
    const hold = createHoldScheduler({ clock: systemClock, maxMessages: 5, maxBytes: 1000, onPressure: (full) => signals.push(full) });
    const dones = Array.from({ length: 5 }, () => hold.track(10));
    expect(hold.isFull()).toBe(true);
    expect(hold.held()).toEqual({ messages: 0, bytes: 0 });
    dones[0]();
    dones[0]();
    expect(hold.isFull()).toBe(true);
    dones[1]();
    expect(hold.isFull()).toBe(false);
    const big = hold.track(1000);
    expect(hold.isFull()).toBe(true);
    big();
    expect(signals).toEqual([true, false, true, false]);
  });

  it('says what counts against the caps: the held messages and those tracked until acknowledged', () => {
    const hold = createHoldScheduler({ clock: systemClock, maxMessages: 100, maxBytes: 1e6 });
    hold.add({ at: Date.now() + 60_000, bytes: 7, release: () => undefined, evict: () => undefined });
    const one = hold.track(10);
    const together = hold.track(30, 3);
    expect(hold.counted()).toEqual({ messages: 5, bytes: 47 });
    expect(hold.held()).toEqual({ messages: 1, bytes: 7 });
    together();
    one();
    expect(hold.counted()).toEqual({ messages: 1, bytes: 7 });
    hold.close();
  });
});

describe('when a rebalance takes partitions away', () => {
  it('hands back the held messages of the partitions handed over (never released) and keeps the others, with or without an owner', async () => {
    const held: number[] = [];
    const hold = createHoldScheduler({ clock: systemClock, maxMessages: 100, maxBytes: 1e6, onHeldChange: (messages) => held.push(messages) });
    const now = Date.now();
    const released: string[] = [];
    const dropped: string[] = [];
    const add = (id: string, owner?: string): void =>
      hold.add({ at: now + 20, bytes: 10, owner, release: () => released.push(id), evict: () => dropped.push(id) });
    add('a0', 'a/0');
    add('b0', 'b/0');
    add('none');
    add('b1', 'b/1');
    const taken = hold.takeOwned((owner) => owner.startsWith('b/'));
    expect(taken.map((m) => m.owner).sort()).toEqual(['b/0', 'b/1']);
    expect(hold.held()).toEqual({ messages: 2, bytes: 20 });
    expect(held[held.length - 1]).toBe(2);
    for (const m of taken) m.evict();
    expect(dropped.sort()).toEqual(['b0', 'b1']);
    await hold.whenEmpty();
    expect(released).toEqual(['a0', 'none']);
    hold.close();
  });

  it('signals relief when what it hands back brings the hold below 80% of its cap, and changes nothing when nothing matches', () => {
    const signals: boolean[] = [];
    const changes: number[] = [];
    const hold = createHoldScheduler({
      clock: systemClock, maxMessages: 2, maxBytes: 1e6, onPressure: (full) => signals.push(full), onHeldChange: (messages) => changes.push(messages),
    });
    const at = Date.now() + 60_000;
    hold.add({ at, bytes: 1, owner: 'a/0', release: () => undefined, evict: () => undefined });
    hold.add({ at, bytes: 1, owner: 'b/0', release: () => undefined, evict: () => undefined });
    expect(signals).toEqual([true]);
    expect(hold.takeOwned((owner) => owner === 'c/0')).toEqual([]);
    expect(changes).toEqual([1, 2]);
    expect(hold.takeOwned((owner) => owner === 'b/0')).toHaveLength(1);
    expect(signals).toEqual([true, false]);
    expect(changes).toEqual([1, 2, 1]);
    hold.close();
  });

  it('resolves whenEmpty once the last held message is handed back', async () => {
    const hold = createHoldScheduler({ clock: systemClock, maxMessages: 100, maxBytes: 1e6 });
    hold.add({ at: Date.now() + 60_000, bytes: 1, owner: 'a/0', release: () => undefined, evict: () => undefined });
    const empty = hold.whenEmpty();
    hold.takeOwned(() => true);
    await expect(empty).resolves.toBeUndefined();
    hold.close();
  });
});

describe('when releases fire late (the process is behind)', () => {
  it('signals late once, and on time again LATE_HOLD_MS after the last late release', async () => {
    const clock = manualClock(1000);
    const signals: [boolean, number][] = [];
    const hold = createHoldScheduler({ clock, maxMessages: 100, maxBytes: 1e6, onLate: (late) => signals.push([late, clock.now()]) });
    for (const at of [1010, 1020, 2000]) hold.add({ at, bytes: 1, release: () => undefined, evict: () => undefined });
    clock.set(1010 + RELEASE_LATE_MS + 5); // both of the first are late by more than RELEASE_LATE_MS
    await until(() => hold.held().messages === 1);
    expect(signals).toEqual([[true, 1010 + RELEASE_LATE_MS + 5]]);
    clock.advance(LATE_HOLD_MS); // no late release since: on time again (the third is not due yet)
    await until(() => signals.length === 2);
    expect(signals[1][0]).toBe(false);
    hold.close();
  });

  it('is on time again at once when nothing is held any more', async () => {
    const clock = manualClock(1000);
    const signals: boolean[] = [];
    const hold = createHoldScheduler({ clock, maxMessages: 100, maxBytes: 1e6, onLate: (late) => signals.push(late) });
    hold.add({ at: 1010, bytes: 1, release: () => undefined, evict: () => undefined });
    clock.set(1100);
    await until(() => signals.length === 1);
    hold.add({ at: 1100, bytes: 1, release: () => undefined, evict: () => undefined });
    await until(() => signals.length === 2);
    expect(signals).toEqual([true, false]);
    hold.close();
  });
});

describe('when releases that waited for no rate fire late (conforming)', () => {
  // Closed even when an expectation fails: a hold on a manual clock re-arms its timer forever.
  const holds: HoldScheduler[] = [];
  afterEach(() => holds.splice(0).forEach((hold) => hold.close()));

  it('pauses nothing for them, and measures the lateness of the first release among them that waited for its rate', async () => {
    const clock = manualClock(1000);
    const signals: [boolean, number][] = [];
    const hold = createHoldScheduler({ clock, maxMessages: 100, maxBytes: 1e6, onLate: (late) => signals.push([late, clock.now()]) });
    holds.push(hold);
    hold.add({ at: 1010, conforming: true, bytes: 1, release: () => undefined, evict: () => undefined });
    hold.add({ at: 1011, conforming: true, bytes: 1, release: () => undefined, evict: () => undefined });
    hold.add({ at: 1100, bytes: 1, release: () => undefined, evict: () => undefined });
    clock.set(1010 + RELEASE_LATE_MS + 5); // both conforming ones are late by more than RELEASE_LATE_MS
    await until(() => hold.held().messages === 1);
    expect(signals).toEqual([]);
    // Fired with one that waited, due RELEASE_LATE_MS + 1 ago, behind a conforming one due earlier: late.
    hold.add({ at: 1100 - 50, conforming: true, bytes: 1, release: () => undefined, evict: () => undefined });
    clock.set(1100 + RELEASE_LATE_MS + 1);
    await until(() => hold.held().messages === 0);
    expect(signals).toEqual([[true, 1100 + RELEASE_LATE_MS + 1]]);
  });

  it('is not late when the release among them that waited for its rate is on time', async () => {
    const clock = manualClock(1000);
    const signals: boolean[] = [];
    const hold = createHoldScheduler({ clock, maxMessages: 100, maxBytes: 1e6, onLate: (late) => signals.push(late) });
    holds.push(hold);
    hold.add({ at: 1010, conforming: true, bytes: 1, release: () => undefined, evict: () => undefined });
    hold.add({ at: 1040, conforming: false, bytes: 1, release: () => undefined, evict: () => undefined });
    clock.set(1040 + RELEASE_LATE_MS); // the conforming one 55 ms late, the other just within RELEASE_LATE_MS
    await until(() => hold.held().messages === 0);
    expect(signals).toEqual([]);
  });
});

describe('when the hold passes YIELD_SHARE of a cap', () => {
  it('asks the flow taking new messages to yield, and lets it go on below 80% of that share', () => {
    const signals: boolean[] = [];
    const hold = createHoldScheduler({ clock: systemClock, maxMessages: 100, maxBytes: 1e6, onYield: (y) => signals.push(y) });
    const done = Array.from({ length: 100 * YIELD_SHARE }, () => hold.track(1));
    expect(signals).toEqual([true]);
    expect(hold.isFull()).toBe(false);
    done.slice(0, 10).forEach((d) => d());
    expect(signals).toEqual([true]);
    done.slice(10, 16).forEach((d) => d());
    expect(signals).toEqual([true, false]);
    hold.close();
  });
});

describe('when a release instant lies beyond what setTimeout holds (2^31 − 1 ms)', () => {
  it('neither releases it nor spins on it in the first milliseconds', async () => {
    const hold = createHoldScheduler({ clock: systemClock, maxMessages: 100, maxBytes: 1e6 });
    const released = jest.fn();
    const armed = jest.spyOn(global, 'setTimeout');
    try {
      hold.add({ at: Date.now() + 30 * 86_400_000, bytes: 1, release: released, evict: () => undefined });
      await new Promise((r) => setImmediate(r));
      const before = armed.mock.calls.length;
      await new Promise((r) => setTimeout(r, 30));
      expect(released).not.toHaveBeenCalled();
      expect(armed.mock.calls.length - before).toBeLessThanOrEqual(1); // the wait above; no re-arming every millisecond
    } finally {
      armed.mockRestore();
      hold.close();
    }
  });
});
