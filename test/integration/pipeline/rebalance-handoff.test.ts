/**
 * Issue 28: a partition that moves in a rebalance is started by its new owner only once the old
 * owner has finished with it (src/flow/handoff-fence.ts), however slow the old owner is. Real
 * `sluice run` replicas, a real broker and Redis; judged by message ids (backlog-fixture.ts).
 *
 * Replica A carries a backlog alone (producer `busy` at 1.5× its quota over 4 keys: messages are
 * held and parked, `calm` at 0.5×). Replica B starts; the moment A logs its join of the
 * rebalance B causes (its partitions lost are being parked and committed), A is SIGSTOPped for
 * 1.5 s — longer than the fixed 300 ms hand-over the new owner used to wait. Every message must
 * reach the downstream topic exactly once: B starts A's old partitions from A's final commit.
 */
import '../../helpers/processes';
import { readFileSync, watch } from 'node:fs';
import { createKafka, kafkaBrokers } from '../../helpers/kafka';
import { redisUrl } from '../../helpers/redis';
import { waitFor } from '../../helpers/wait';
import {
  BacklogScenario, createBacklogScenario, deleteScenarioTopics, endAllReplicas, offerLoad, Out, readOutcome, Replica, startReplica,
} from '../retry/backlog-fixture';

const kafka = createKafka();
const RATE = 20;
const STOP_MS = 1500;
const scenarios: BacklogScenario[] = [];
const stopped = new Set<Replica>();

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

afterEach(async () => {
  for (const r of stopped) r.signal('SIGCONT');
  stopped.clear();
  await endAllReplicas();
  await Promise.all(scenarios.splice(0).map((s) => deleteScenarioTopics(kafka, s)));
});

/** The ingress flow's "joined the group" lines in a replica's log (sync writes: a line is there once logged). */
const ingressJoins = (r: Replica): number =>
  readFileSync(r.log, 'utf8').split('\n').filter((l) => l.includes('"msg":"joined the group"') && l.includes('"component":"ingress"')).length;

/** Whether `group` committed every partition of `topics` up to its end offset. */
const committedToEnd = async (groupId: string, topics: string[]): Promise<boolean> => {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const committed = await admin.fetchOffsets({ groupId, topics });
    for (const topic of topics) {
      for (const end of await admin.fetchTopicOffsets(topic)) {
        if (BigInt(end.high) === BigInt(end.low)) continue;
        const at = committed.find((c) => c.topic === topic)?.partitions.find((p) => p.partition === end.partition)?.offset ?? '-1';
        if (BigInt(at) < BigInt(end.high)) return false;
      }
    }
    return true;
  } finally {
    await admin.disconnect();
  }
};

const tiersOf = async (s: BacklogScenario): Promise<string[]> => {
  const admin = kafka.admin();
  await admin.connect();
  try {
    return (await admin.listTopics()).filter((t) => t.startsWith(`${s.retryBase}.`));
  } finally {
    await admin.disconnect();
  }
};

describe('when a partition moves while its old owner is stopped (SIGSTOP 1.5 s) just after the join', () => {
  it('forwards no message twice: the new owner starts from the old owner\'s final commit', async () => {
    const s = await createBacklogScenario(kafka, {
      brokers: kafkaBrokers().join(','), redisUrl: redisUrl(), partitions: 2, quotas: `default:\n  rate: ${RATE}/s\n  queue: 1m\n`,
      settings: { SLUICE_RETRY_TIERS: '1s,5s', SLUICE_HOLD_MAX_MS: '5000', SLUICE_LOG_LEVEL: 'info' },
    });
    scenarios.push(s);
    const a = await startReplica(s);
    await a.ready();
    const reader = await readOutcome(kafka, s);
    const loading = offerLoad(kafkaBrokers(), s.ingress, [
      { id: 'busy', perSecond: 1.5 * RATE, seconds: 12, keys: 4 },
      { id: 'calm', perSecond: RATE / 2, seconds: 12 },
    ]);
    await sleep(4000); // A holds and parks a backlog
    const joinsBefore = ingressJoins(a);
    let stoppedAt: number | undefined;
    const watcher = watch(a.log, () => {
      if (stoppedAt !== undefined || ingressJoins(a) <= joinsBefore) return;
      a.signal('SIGSTOP');
      stopped.add(a);
      stoppedAt = Date.now();
    });
    const startedB = Date.now();
    const b = await startReplica(s);
    try {
      await waitFor(() => stoppedAt !== undefined, { timeoutMs: 60_000, intervalMs: 5, message: 'replica A to join the rebalance replica B causes' });
    } finally {
      watcher.close();
    }
    await sleep(Math.max(0, (stoppedAt as number) + STOP_MS - Date.now()));
    a.signal('SIGCONT');
    stopped.delete(a);
    await b.ready();

    const offered = await loading;
    const values = [...offered.byProducer.values()].flat().map((o) => o.value);
    const complete = await reader.accounted(values, Date.now() + 120_000);
    // Late copies come back through the tiers: wait until both groups committed everything.
    const tiers = await tiersOf(s);
    await waitFor(async () => (await committedToEnd(s.env.SLUICE_GROUP_ID as string, [s.ingress])) && (await committedToEnd(s.env.SLUICE_RETRY_GROUP_ID as string, tiers)),
      { timeoutMs: 60_000, intervalMs: 500, message: 'every ingress and tier partition to be committed to its end' }).catch(() => undefined);
    // Then both stop: once they have exited nothing more can reach the downstream topic, and the
    // reader reads to its end offsets (a copy sent late is counted however late it was).
    await Promise.all([a, b].map((r) => r.stop('SIGTERM')));
    const outcome = await reader.finish();
    // Each record once (the reader's own consumer may be handed a batch again), then each value once.
    const records = new Map<string, Out>(outcome.forwarded.map((o) => [`${o.partition}/${o.offset}`, o]));
    const counts = new Map<string, number>();
    for (const o of records.values()) counts.set(o.value, (counts.get(o.value) ?? 0) + 1);
    const twice = [...counts].filter(([, n]) => n > 1).map(([v]) => v);
    const lost = values.filter((v) => !counts.has(v) && !outcome.deadLettered.some((d) => d.value === v));
    const expired = readFileSync(b.log, 'utf8').split('\n').filter((l) => l.includes('hand-off bound')).length;
    process.stderr.write(`rebalance-handoff: A stopped ${((stoppedAt as number) - startedB) / 1000} s after B started, for ${STOP_MS} ms; `
      + `offered ${values.length}, forwarded ${records.size}, lost ${lost.length}, forwarded twice ${twice.length}; hand-off waits expired (B) ${expired}\n`);
    expect({ complete, lost: lost.length, twice }).toEqual({ complete: true, lost: 0, twice: [] });
  }, 300_000);
});
