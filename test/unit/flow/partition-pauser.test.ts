import { systemClock } from '../../../src/clock';
import { Consumer, Kafka, logLevel } from 'kafkajs';
import { createPartitionPauser, FUTURE_TOLERANCE_MS, READ_BATCH_MS, readLater, turnOf } from '../../../src/flow/partition-pauser';
import { HOP_MARGIN_MS } from '../../../src/flow/flow-item';
import { buildTiers } from '../../../src/park/park';

type Call = [string, { topic: string; partitions?: number[] }[]];

const setup = () => {
  const calls: Call[] = [];
  const consumer = {
    pause: (topics: { topic: string; partitions?: number[] }[]) => void calls.push(['pause', topics]),
    resume: (topics: { topic: string; partitions?: number[] }[]) => void calls.push(['resume', topics]),
  };
  return { calls, pauser: createPartitionPauser({ consumer, clock: systemClock }) };
};

const until = (condition: () => boolean): Promise<void> =>
  new Promise((resolve) => {
    const check = (): void => (condition() ? resolve() : void setTimeout(check, 5));
    check();
  });

describe('when a partition head is not due', () => {
  it('pauses the partition and resumes it at the instant', async () => {
    const { calls, pauser } = setup();
    pauser.pauseUntil('t', 1, Date.now() + 30);
    expect(calls).toEqual([['pause', [{ topic: 't', partitions: [1] }]]]);
    expect([...pauser.paused().keys()]).toEqual(['t/1']);
    await until(() => calls.length === 2);
    expect(calls[1]).toEqual(['resume', [{ topic: 't', partitions: [1] }]]);
    expect(pauser.paused().size).toBe(0);
  });
});

describe('when the group is joined again', () => {
  it('forgets remembered pauses and resumes every assigned partition', async () => {
    const { calls, pauser } = setup();
    pauser.pauseUntil('t', 0, Date.now() + 60_000);
    pauser.onAssignment([{ topic: 't', partitions: [0, 1] }]);
    expect(calls[1]).toEqual(['resume', [{ topic: 't', partitions: [0, 1] }]]);
    expect(pauser.paused().size).toBe(0);
    pauser.close();
  });
});

describe('when memory is full', () => {
  it('pauses everything assigned and, once free, resumes only what is not waiting for its instant', () => {
    const { calls, pauser } = setup();
    pauser.onAssignment([{ topic: 't', partitions: [0, 1] }]);
    pauser.pauseUntil('t', 0, Date.now() + 60_000);
    pauser.setBlocked(true);
    expect(calls[calls.length - 1]).toEqual(['pause', [{ topic: 't', partitions: [0, 1] }]]);
    pauser.setBlocked(false);
    expect(calls[calls.length - 1]).toEqual(['resume', [{ topic: 't', partitions: [1] }]]);
    pauser.close();
  });
});

describe('when a partition is stopped on a message that cannot be written', () => {
  it('pauses it for good: it stays paused across a group join and once memory is free', () => {
    const { calls, pauser } = setup();
    pauser.onAssignment([{ topic: 't', partitions: [0, 1] }]);
    pauser.stop('t', 0);
    expect(calls[calls.length - 1]).toEqual(['pause', [{ topic: 't', partitions: [0] }]]);
    expect(pauser.isStopped('t', 0)).toBe(true);
    expect(pauser.isStopped('t', 1)).toBe(false);
    pauser.onAssignment([{ topic: 't', partitions: [0, 1] }]);
    expect(calls.slice(-2)).toEqual([['resume', [{ topic: 't', partitions: [0, 1] }]], ['pause', [{ topic: 't', partitions: [0] }]]]);
    pauser.setBlocked(true);
    pauser.setBlocked(false);
    expect(calls[calls.length - 1]).toEqual(['resume', [{ topic: 't', partitions: [1] }]]);
    expect(pauser.isStopped('t', 0)).toBe(true);
    pauser.close();
  });

  it('is not resumed when a pause until an instant on it runs out', async () => {
    const { calls, pauser } = setup();
    pauser.stop('t', 0);
    pauser.pauseUntil('t', 0, Date.now() + 20);
    await until(() => pauser.paused().size === 0);
    expect(calls.filter(([kind]) => kind === 'resume')).toEqual([]);
  });
});

describe('when the consumer has no consumer group (between a crash and its restart)', () => {
  // A kafkajs consumer that never ran is in the state a crash leaves until kafkajs restarts it:
  // its pause and resume throw "Consumer group was not initialized".
  const idle = (): Consumer => new Kafka({ brokers: ['127.0.0.1:1'], logLevel: logLevel.NOTHING }).consumer({ groupId: 'g' });

  it('blocks, unblocks, pauses and resumes without throwing', async () => {
    const consumer = idle();
    expect(() => consumer.pause([{ topic: 't', partitions: [0] }])).toThrow(/not initialized/);
    const pauser = createPartitionPauser({ consumer, clock: systemClock });
    pauser.onAssignment([{ topic: 't', partitions: [0, 1] }]);
    expect(() => pauser.setBlocked(true)).not.toThrow();
    expect(() => pauser.setBlocked(false)).not.toThrow();
    expect(() => pauser.stop('t', 1)).not.toThrow();
    pauser.pauseUntil('t', 0, Date.now() + 10);
    await until(() => pauser.paused().size === 0);
    pauser.close();
  });

  it('still throws what is not about a missing consumer group', () => {
    const consumer = idle();
    const pauser = createPartitionPauser({ consumer, clock: systemClock });
    expect(() => pauser.onAssignment([{ topic: '', partitions: [0] }])).toThrow(/Invalid topic/);
    pauser.close();
  });
});

describe('when a partition is paused until an instant beyond what setTimeout holds (2^31 − 1 ms)', () => {
  it('stays paused in the first milliseconds', async () => {
    const { calls, pauser } = setup();
    pauser.pauseUntil('t', 0, Date.now() + 30 * 86_400_000);
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(calls.map(([call]) => call)).toEqual(['pause']);
    expect([...pauser.paused().keys()]).toEqual(['t/0']);
    pauser.close();
  });
});

const [s5, m1] = buildTiers('r', [5000, 60_000]);
const now = 1_000_000;

describe('when a tier message may be taken', () => {
  it('is when its tier delay is over, if that comes before its not-before is within the read-ahead', () => {
    expect(turnOf({ tier: s5, parkedAt: now, notBefore: now + 60_000 }, now, 5000)).toBe(now + 5000);
  });

  it('is when its not-before is within the read-ahead, if that comes before its tier delay is over', () => {
    expect(turnOf({ tier: m1, parkedAt: now, notBefore: now + 20_000 }, now, 5000)).toBe(now + 15_000);
  });

  it('is the earlier of the two, which may already be past', () => {
    expect(turnOf({ tier: m1, parkedAt: now - 60_000, notBefore: now + 30_000 }, now, 5000)).toBe(now);
    expect(turnOf({ tier: m1, parkedAt: now - 1000, notBefore: now + 2000 }, now, 5000)).toBe(now - 3000);
    expect(turnOf({ tier: m1, parkedAt: now, notBefore: now + 60_000 }, now, 0)).toBe(now + 60_000);
  });

  it('is at most the tier delay + FUTURE_TOLERANCE_MS away for a record whose timestamp is in the future (it holds its partition no longer than a fresh park)', () => {
    expect(turnOf({ tier: m1, parkedAt: now + 86_400_000 * 30, notBefore: now + 86_400_000 * 60 }, now, 5000)).toBe(now + FUTURE_TOLERANCE_MS + 60_000);
    expect(turnOf({ tier: m1, parkedAt: now + FUTURE_TOLERANCE_MS, notBefore: now + 3_600_000 }, now, 5000)).toBe(now + FUTURE_TOLERANCE_MS + 60_000);
    expect(turnOf({ tier: s5, parkedAt: now + 500, notBefore: now + 3_600_000 }, now, 5000)).toBe(now + 5500);
  });

  it('is when the tier delay is over for a malformed record (no not-before to read ahead of)', () => {
    expect(turnOf({ tier: m1, parkedAt: now - 1000 }, now, 5000)).toBe(now + 59_000);
  });
});

describe('what a read of a tier partition takes', () => {
  it('takes a message whose not-before is within the read-ahead plus READ_BATCH_MS, though its turn is later', () => {
    expect(readLater({ tier: m1, parkedAt: now, notBefore: now + 5000 + READ_BATCH_MS }, now, 5000)).toBeUndefined();
    expect(readLater({ tier: m1, parkedAt: now, notBefore: now + 5000 }, now, 5000)).toBeUndefined();
  });

  it('leaves one due later until its turn, when its partition is read again', () => {
    expect(readLater({ tier: m1, parkedAt: now, notBefore: now + 5001 + READ_BATCH_MS }, now, 5000)).toBe(now + 1 + READ_BATCH_MS);
  });

  it('takes no message before its tier delay is over unless its not-before is near (a hop is never made early)', () => {
    expect(readLater({ tier: s5, parkedAt: now - 4999, notBefore: now + 60_000 }, now, 5000)).toBe(now + 1);
    expect(readLater({ tier: m1, parkedAt: now - 1000 }, now, 5000)).toBe(now + 59_000);
  });

  it('is a batch small enough that what it takes early is held in memory, not hopped', () => {
    expect(READ_BATCH_MS).toBeLessThanOrEqual(HOP_MARGIN_MS);
  });
});
