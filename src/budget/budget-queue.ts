/**
 * The budget's waiting room: messages a contended budget refused wait here in memory, in their
 * producer's order, and are decided again as the budget frees (docs/budget.md "Waiting for the
 * budget"). Without it a refused message was parked with a not-before spread at the share it was
 * refused under, and came back at that pace even after the budget had freed: a producer whose
 * part grew could not use it.
 *
 * RULE. While a producer has messages here (or out being decided again), its next messages wait
 * behind them instead of being decided (its order is kept, and a fresh message never takes the
 * slot an older one waits for). Its pump decides the head again, CHUNK messages at a time, every
 * PUMP_MS — the budget's horizon is 250 ms, so a bucket refilled every 100 ms never runs empty
 * while the producer has a backlog. The first chunk is what the producer's share fills in a horizon
 * and a pump (the caller's `chunk`); then it follows what fitted: all admitted → doubled; some
 * refused → what was admitted plus MARGIN, so about MARGIN refusals are asked for per pump and a
 * refusal's tail (decide-1.lua) never runs ahead of the clock.
 *
 * BOUNDS. A message waits here at most its own rule's queue (`maxWaitMs`, the time its own bucket
 * would have held it), then it is parked to be decided again, as a message that does not fit its
 * own queue. All waiting messages count against the hold's caps; this room takes at most
 * `limit` of them (half the caps by default), beyond which a refused message is parked as before —
 * so a budget never pauses the ingress of producers within their share. A rebalance parks what
 * waits for the partitions lost; a graceful stop parks everything.
 */
import type { Clock } from '../clock';
import { clampDelay } from '../timers';

export interface WaitingMessage {
  producer: string;
  /** The partition it came from ("topic\u0000partition"): a rebalance parks what it owns. */
  owner: string;
  bytes: number;
  /** Decide it again (through its own flow); settles once it was taken. */
  redecide(): Promise<unknown>;
  /** Taken out undecided by a rebalance or a stop: park it to be decided again (no refusal of its own). */
  evict(): void;
  /** Waited its own queue: park it as the overflow it is (a refusal counted). */
  expire(): void;
}

export interface BudgetQueue {
  /** Whether a message of `producer` about to be decided waits behind its producer's queue instead (it is then pushed). */
  joins(producer: string, key: object, bytes: number): boolean;
  /**
   * Queues a message (`key`: the flow's item); false when the room is used up (park it instead).
   * `chunk`: how many its producer's share admits in a horizon and a pump (a new line's first chunk).
   */
  push(key: object, message: WaitingMessage, maxWaitMs: number, chunk?: number): boolean;
  /** A rebalance starts: decide nothing again until `resume` (calls nest: one per flow rebalancing). */
  pause(): void;
  resume(): void;
  /** Resolves once no message is out being decided again (a rebalance waits for it before its commit). */
  settled(): Promise<void>;
  /** Parks what waits for the partitions lost. */
  evictOwned(lost: (owner: string) => boolean): void;
  /** Parks everything (graceful stop) and pumps no more. */
  close(): void;
  waiting(): { messages: number; bytes: number; producers: number };
}

export interface BudgetQueueOptions {
  clock: Clock;
  /** The most messages and bytes waiting here at once. */
  limit: { messages: number; bytes: number };
  /** Counts `bytes` against the hold's caps until the returned function is called. */
  track(bytes: number): () => void;
}

/** How often a producer's head is decided again. */
export const PUMP_MS = 100;
/** Refusals asked for per pump once the chunk has found what fits. */
export const MARGIN = 2;
/** A pump's first chunk when the caller gives none, and the most it ever decides at once (one store call). */
export const FIRST_CHUNK = 4;
export const MAX_CHUNK = 2000;

interface Entry {
  seq: number;
  key: object;
  message: WaitingMessage;
  deadline: number;
  untrack?: () => void;
}

interface Line {
  entries: Entry[];
  chunk: number;
  /** Entries out being decided again (their keys). */
  out: Map<object, Entry>;
  returned: number;
  timer?: NodeJS.Timeout;
}

/** Inserts by seq (entries come back near the front: a short scan from there). */
const insert = (entries: Entry[], entry: Entry): void => {
  let i = 0;
  while (i < entries.length && entries[i].seq < entry.seq) i += 1;
  entries.splice(i, 0, entry);
};

export const createBudgetQueue = ({ clock, limit, track }: BudgetQueueOptions): BudgetQueue => {
  const lines = new Map<string, Line>();
  let seq = 0;
  let messages = 0;
  let bytes = 0;
  let closed = false;
  let paused = 0;
  let out = 0;
  const waiters: (() => void)[] = [];

  const count = (entry: Entry): void => {
    entry.untrack = track(entry.message.bytes);
    messages += 1;
    bytes += entry.message.bytes;
  };
  const uncount = (entry: Entry): void => {
    entry.untrack?.();
    entry.untrack = undefined;
    messages -= 1;
    bytes -= entry.message.bytes;
  };

  const forget = (producer: string, line: Line): void => {
    if (line.entries.length > 0 || line.out.size > 0) return;
    if (line.timer) clearTimeout(line.timer);
    lines.delete(producer);
  };

  const schedule = (producer: string, line: Line, delayMs: number): void => {
    if (closed || paused > 0 || line.timer || line.out.size > 0 || line.entries.length === 0) return;
    line.timer = setTimeout(() => pump(producer, line), clampDelay(delayMs));
  };

  const pump = (producer: string, line: Line): void => {
    line.timer = undefined;
    if (closed || paused > 0) return;
    const now = clock.now();
    while (line.entries.length > 0 && line.entries[0].deadline <= now) {
      const entry = line.entries.shift() as Entry;
      uncount(entry);
      entry.message.expire();
    }
    const chunk = line.entries.splice(0, line.chunk);
    if (chunk.length === 0) return forget(producer, line);
    line.returned = 0;
    out += 1;
    for (const entry of chunk) {
      uncount(entry);
      line.out.set(entry.key, entry);
    }
    // All in one tick: the flow's decider coalesces them into one store call.
    const taken = chunk.map((entry) => entry.message.redecide().catch(() => undefined));
    void Promise.all(taken).then(() => {
      for (const entry of chunk) line.out.delete(entry.key);
      out -= 1;
      if (out === 0) for (const done of waiters.splice(0)) done();
      const admitted = chunk.length - line.returned;
      line.chunk = line.returned === 0 ? Math.min(MAX_CHUNK, line.chunk * 2) : Math.max(1, Math.min(MAX_CHUNK, admitted + MARGIN));
      if (line.entries.length === 0) return forget(producer, line);
      schedule(producer, line, PUMP_MS);
    });
  };

  const lineOf = (producer: string, chunk: number): Line => {
    const line: Line = { entries: [], chunk: Math.max(1, Math.min(MAX_CHUNK, Math.ceil(chunk))), out: new Map(), returned: 0 };
    lines.set(producer, line);
    return line;
  };

  const hasRoom = (size: number): boolean => !closed && messages < limit.messages && bytes + size <= limit.bytes;

  return {
    joins(producer, key, size) {
      const line = lines.get(producer);
      if (!line || line.out.has(key)) return false;
      return hasRoom(size);
    },
    push(key, message, maxWaitMs, chunk = FIRST_CHUNK) {
      const line = lines.get(message.producer);
      const back = line?.out.get(key);
      if (line && back) {
        // Refused again while being decided again: back to its place at the front.
        if (closed) return false;
        back.message = message;
        line.returned += 1;
        count(back);
        insert(line.entries, back);
        return true;
      }
      if (!hasRoom(message.bytes)) return false;
      const mine = line ?? lineOf(message.producer, chunk);
      const entry: Entry = { seq: seq++, key, message, deadline: clock.now() + maxWaitMs };
      count(entry);
      mine.entries.push(entry);
      schedule(message.producer, mine, PUMP_MS);
      return true;
    },
    pause() {
      paused += 1;
    },
    resume() {
      paused = Math.max(0, paused - 1);
      if (paused === 0) for (const [producer, line] of lines) schedule(producer, line, 0);
    },
    settled: () => (out === 0 ? Promise.resolve() : new Promise((resolve) => waiters.push(resolve))),
    evictOwned(lost) {
      for (const [producer, line] of lines) {
        const keep: Entry[] = [];
        for (const entry of line.entries) {
          if (!lost(entry.message.owner)) {
            keep.push(entry);
            continue;
          }
          uncount(entry);
          entry.message.evict();
        }
        line.entries = keep;
        forget(producer, line);
      }
    },
    close() {
      closed = true;
      for (const line of lines.values()) {
        if (line.timer) clearTimeout(line.timer);
        line.timer = undefined;
        const entries = line.entries;
        line.entries = [];
        for (const entry of entries) {
          uncount(entry);
          entry.message.evict();
        }
      }
    },
    waiting: () => ({ messages, bytes, producers: lines.size }),
  };
};
