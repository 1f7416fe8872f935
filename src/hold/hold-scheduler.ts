/**
 * Holds admitted messages in memory until their release instant (local epoch ms), then calls
 * their `release`. The caller never waits here: `add` returns at once. Held messages and bytes
 * are capped: past either cap `onPressure(true)` tells the consumer to pause; once both fall
 * below 80% of their cap, `onPressure(false)` lets it resume.
 *
 * Releases come first: when one that waited for its producer's rate (not `conforming`) fires
 * more than RELEASE_LATE_MS after its instant (the event loop is busy, most often with reading
 * and parking a flood), `onLate(true)` asks the flow that takes new messages to pause, so what
 * was already admitted leaves on its slot; lanes never recover a slot that passed. A message let
 * through at once has no slot to lose: late, it pauses nothing (a cold or busy process paused
 * its reading 250 ms at a time for those, and fell seconds behind a load it could carry).
 * `onLate(false)` once a release is on time again and none was late for
 * LATE_HOLD_MS, or once nothing is held. The same flow yields early on memory too: past
 * YIELD_SHARE of either cap `onYield(true)` (below 80% of that, `onYield(false)`), so the
 * messages already admitted — the tiers read ahead of their slots — keep the rest of the room.
 */
import type { Clock } from '../clock';
import { clampDelay } from '../timers';
import { MinHeap } from '../min-heap';

export interface HeldMessage {
  /** Local epoch ms at which to release. */
  at: number;
  bytes: number;
  /** Called once, at (or just after) `at`. */
  release(): void;
  /** Let through at once, waiting for no rate (as a lane's item): late, its producer loses no slot, so it pauses no reading (`onLate`). Default false. */
  conforming?: boolean;
  /** Called instead of release when the message is taken out before its instant (graceful stop parks it). */
  evict(): void;
  /** The partition the message came from ("topic\u0000partition"): a rebalance hands over what it owns. */
  owner?: string;
}

export interface HoldScheduler {
  add(message: HeldMessage): void;
  /**
   * Counts a message (or `messages` sent together, `bytes` in all) sent without being held (due
   * at once) against the caps until the returned function is called (once acknowledged), so a
   * fast ingress still meets back-pressure. Not part of held() or whenEmpty(): those are the
   * messages still waiting for their instant.
   */
  track(bytes: number, messages?: number): () => void;
  held(): { messages: number; bytes: number };
  /** What counts against the caps: the held messages and those tracked until acknowledged. */
  counted(): { messages: number; bytes: number };
  isFull(): boolean;
  /** Removes and returns (in release order) the held messages due after `instant`: shutdown parks them. */
  takeLaterThan(instant: number): HeldMessage[];
  /** Removes and returns the held messages whose owner matches (and that are due after `after`): a rebalance hands their partition over. */
  takeOwned(owned: (owner: string) => boolean, after?: number): HeldMessage[];
  /** The latest release instant held, or undefined when empty. */
  latest(): number | undefined;
  /** Resolves once nothing is held. */
  whenEmpty(): Promise<void>;
  close(): void;
}

export interface HoldOptions {
  clock: Clock;
  maxMessages: number;
  maxBytes: number;
  onPressure?: (full: boolean) => void;
  onHeldChange?: (messages: number, bytes: number) => void;
  /** Releases run late (true) or on time again (false). */
  onLate?: (late: boolean) => void;
  /** Past YIELD_SHARE of a cap (true), or below 80% of that again (false). */
  onYield?: (full: boolean) => void;
}

type Entry = HeldMessage & { seq: number };

/** A release this late (ms after its instant) means the process is behind. */
export const RELEASE_LATE_MS = 25;
/** Behind until no release was late for this long (no pause/resume flapping). */
export const LATE_HOLD_MS = 250;
/** Share of the caps past which the flow taking new messages yields to the tiers. */
export const YIELD_SHARE = 0.75;

export const createHoldScheduler = ({ clock, maxMessages, maxBytes, onPressure, onHeldChange, onLate, onYield }: HoldOptions): HoldScheduler => {
  const heap = new MinHeap<Entry>();
  let seq = 0;
  let bytes = 0;
  let outMessages = 0;
  let outBytes = 0;
  let full = false;
  let yielding = false;
  let timer: NodeJS.Timeout | undefined;
  let timerAt = Infinity;
  let waiters: (() => void)[] = [];
  let closed = false;
  let late = false;
  let lateAt = -Infinity;
  let lateTimer: NodeJS.Timeout | undefined;

  /** Behind while releases fire late; on time again LATE_HOLD_MS after the last late one (or at once when nothing is held). */
  const onTimeAgain = (): void => {
    lateTimer = undefined;
    if (!late) return;
    const quiet = clock.now() - lateAt;
    if (quiet < LATE_HOLD_MS && heap.size > 0 && !closed) {
      lateTimer = setTimeout(onTimeAgain, LATE_HOLD_MS - quiet);
      return;
    }
    late = false;
    onLate?.(false);
  };
  const releasedLate = (now: number, lateBy: number): void => {
    if (lateBy <= RELEASE_LATE_MS) {
      if (late && heap.size === 0) onTimeAgain();
      return;
    }
    lateAt = now;
    if (late) return;
    late = true;
    onLate?.(true);
    lateTimer = setTimeout(onTimeAgain, LATE_HOLD_MS);
  };

  const pressure = (): void => {
    const messages = heap.size + outMessages;
    const all = bytes + outBytes;
    if (!yielding && (messages >= maxMessages * YIELD_SHARE || all >= maxBytes * YIELD_SHARE)) {
      yielding = true;
      onYield?.(true);
    } else if (yielding && messages < maxMessages * YIELD_SHARE * 0.8 && all < maxBytes * YIELD_SHARE * 0.8) {
      yielding = false;
      onYield?.(false);
    }
    if (!full && (messages >= maxMessages || all >= maxBytes)) {
      full = true;
      onPressure?.(true);
    } else if (full && messages < maxMessages * 0.8 && all < maxBytes * 0.8) {
      full = false;
      onPressure?.(false);
    }
  };

  const changed = (): void => {
    onHeldChange?.(heap.size, bytes);
    pressure();
    if (heap.size === 0) {
      const ws = waiters;
      waiters = [];
      for (const w of ws) w();
    }
  };

  const fire = (): void => {
    timer = undefined;
    timerAt = Infinity;
    const now = clock.now();
    let released = 0;
    let lateBy = 0; // of the earliest release that waited for its rate
    let measured = false;
    for (let top = heap.peek(); top && top.at <= now; top = heap.peek()) {
      heap.pop();
      bytes -= top.bytes;
      released += 1;
      if (!measured && top.conforming !== true) {
        measured = true;
        lateBy = now - top.at;
      }
      top.release();
    }
    if (released > 0) changed();
    if (released > 0) releasedLate(now, lateBy);
    arm();
  };

  const arm = (): void => {
    const top = heap.peek();
    if (!top || closed || top.at >= timerAt) return;
    if (timer) clearTimeout(timer);
    timerAt = top.at;
    // At most MAX_TIMER_MS ahead: a far instant fires early, releases nothing and arms again.
    timer = setTimeout(fire, clampDelay(top.at - clock.now()));
  };

  return {
    add(message) {
      heap.push({ ...message, seq: seq++ });
      bytes += message.bytes;
      changed();
      arm();
    },
    track(size, messages = 1) {
      outMessages += messages;
      outBytes += size;
      if (!full) pressure();
      let done = false;
      return () => {
        if (done) return;
        done = true;
        outMessages -= messages;
        outBytes -= size;
        if (yielding) pressure();
      };
    },
    held: () => ({ messages: heap.size, bytes }),
    counted: () => ({ messages: heap.size + outMessages, bytes: bytes + outBytes }),
    isFull: () => full,
    takeLaterThan(instant) {
      const keep: Entry[] = [];
      const taken: Entry[] = [];
      for (const entry of heap.drain()) (entry.at > instant ? taken : keep).push(entry);
      for (const entry of keep) heap.push(entry);
      for (const entry of taken) bytes -= entry.bytes;
      changed();
      return taken.sort((a, b) => a.at - b.at || a.seq - b.seq);
    },
    takeOwned(owned, after = -Infinity) {
      const keep: Entry[] = [];
      const taken: Entry[] = [];
      for (const entry of heap.drain()) (entry.owner !== undefined && entry.at > after && owned(entry.owner) ? taken : keep).push(entry);
      for (const entry of keep) heap.push(entry);
      for (const entry of taken) bytes -= entry.bytes;
      if (taken.length > 0) changed();
      return taken;
    },
    latest() {
      let max: number | undefined;
      for (const entry of heap.values()) if (max === undefined || entry.at > max) max = entry.at;
      return max;
    },
    whenEmpty: () => (heap.size === 0 ? Promise.resolve() : new Promise((resolve) => waiters.push(resolve))),
    close() {
      closed = true;
      if (lateTimer) clearTimeout(lateTimer);
      if (timer) clearTimeout(timer);
      timer = undefined;
    },
  };
};
