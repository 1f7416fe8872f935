/**
 * Two `sluice run` processes in one group, one partition each, sharing one Redis: a producer
 * whose messages land on both partitions is held to ONE quota, not one per replica.
 */
import { createKafka, waitForMessages } from '../../helpers/kafka';
import { waitFor } from '../../helpers/wait';
import { appendTimes, countIn, createScenario, maxInWindow, runLoad, Sidecar, startSidecar, windowBound } from './sidecar-fixture';

const kafka = createKafka();
const QUOTA = 20;
const running: Sidecar[] = [];
/** The ingress flow's "joined the group" log lines (the drainer logs its own). */
const ingressJoins = (s: Sidecar): string[] => s.lines.filter((l) => l.includes('"component":"ingress"') && l.includes('joined the group'));

afterAll(async () => {
  await Promise.all(running.map((s) => s.stop('SIGTERM')));
});

describe('when two replicas share one Redis and a producer writes to both of their partitions', () => {
  it('forwards that producer at one quota in total (within 2%), never above quota × t + one slot per replica, plus the append jitter, in any window', async () => {
    const scenario = await createScenario(kafka, { partitions: 2, quotas: `default:\n  rate: ${QUOTA}/s\n  queue: 1m\n` });
    const first = startSidecar(scenario);
    running.push(first);
    await first.joined();
    const second = startSidecar(scenario);
    running.push(second);
    await second.joined();
    // The first replica rejoins with one partition left.
    await waitFor(() => ingressJoins(first).length >= 2, { timeoutMs: 30_000, message: 'the first replica to rejoin' });
    const sent = await runLoad(kafka, scenario.ingress, [{ id: 'spread', perSecond: QUOTA * 3, seconds: 10 }], (_id, seq) => `key-${seq}`);
    expect(sent).toHaveLength(QUOTA * 30);
    // Both partitions carry the producer's messages, and each replica holds one of them.
    const admin = kafka.admin();
    await admin.connect();
    const ends = await admin.fetchTopicOffsets(scenario.ingress).finally(() => admin.disconnect());
    expect(ends.map((e) => Number(e.high) > 0)).toEqual([true, true]);
    const lastJoin = (s: Sidecar): number[] => (JSON.parse(ingressJoins(s).pop() as string) as { assigned: { partitions: number[] }[] }).assigned.flatMap((a) => a.partitions);
    expect([...lastJoin(first), ...lastJoin(second)].sort()).toEqual([0, 1]);
    const downstream = await waitForMessages(kafka, scenario.downstream, QUOTA * 10, { timeoutMs: 60_000 });
    const times = appendTimes(downstream, 'spread');
    const from = times[0] + 1000;
    expect(Math.abs(countIn(times, from, from + 8000) - QUOTA * 8)).toBeLessThanOrEqual(QUOTA * 8 * 0.02);
    // Each replica spaces its own releases; across two replicas a late release may meet the next
    // slot of the other: at most one extra message per replica in a window.
    expect(maxInWindow(times, 1000)).toBeLessThanOrEqual(windowBound(QUOTA, 1000, 2));
    expect(maxInWindow(times, 5000)).toBeLessThanOrEqual(windowBound(QUOTA, 5000, 2));
  }, 180_000);
});
