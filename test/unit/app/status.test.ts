import { createStatusProvider, type StatusDeps } from '../../../src/app/status';
import type { Flow } from '../../../src/flow/flow';
import type { SendTrouble } from '../../../src/produce/batch-sender';

interface ConsumerState {
  crashed?: boolean;
  joined?: boolean;
  silentMs?: number;
  rejoinFailed?: boolean;
}

// Changed: the provider reads the flows' consumers (ingress first, then the drainer of the retry
// tiers) instead of an ingress consumer and an optional drainer; both flows exist from the start.
const flow = ({ crashed = false, joined = true, silentMs = 0, rejoinFailed = false }: ConsumerState = {}): Flow =>
  ({ consumer: { crashed: () => crashed, joined: () => joined, silentMs: () => silentMs, rejoinFailed: () => rejoinFailed, assignment: () => [] } }) as unknown as Flow;

const stuckAfterMs = 300_000;
const provider = (ingress: ConsumerState = {}, drainer: ConsumerState = {}, failing: SendTrouble[] = [], now = 1_000_000) =>
  createStatusProvider({ config: { kafka: { stuckAfterMs }, group: 'g', retry: { group: 'g.retry' } }, flows: [flow(ingress), flow(drainer)], sender: { failing: () => failing }, now: () => now } as unknown as StatusDeps);

const trouble = (since: number): SendTrouble => ({ destination: 'out', since, failures: 9, code: 'TOPIC_AUTHORIZATION_FAILED', error: 'denied' });

describe('liveness (/healthz)', () => {
  it('is alive while neither consumer has crashed for good', () => {
    expect(provider().alive()).toBe(true);
  });

  it('is not alive once the ingress consumer crashed for good', () => {
    expect(provider({ crashed: true }).alive()).toBe(false);
  });

  it('is not alive once the drainer of the retry tiers crashed for good', () => {
    expect(provider({}, { crashed: true }).alive()).toBe(false);
  });

  it('is not alive once a topic has refused every send for kafka.stuckAfterMs, and says which', () => {
    const now = 1_000_000;
    expect(provider({}, {}, [trouble(now - stuckAfterMs + 1)], now).alive()).toBe(true);
    const stuck = provider({}, {}, [trouble(now - stuckAfterMs)], now);
    expect(stuck.alive()).toBe(false);
    expect(stuck.illness?.()).toBe('sends to out have failed for 300 s (TOPIC_AUTHORIZATION_FAILED)');
  });

  it('is not alive once a consumer has not heard from its group for kafka.stuckAfterMs, and says which', () => {
    expect(provider({ silentMs: stuckAfterMs - 1 }, { silentMs: stuckAfterMs - 1 }).alive()).toBe(true);
    const silent = provider({}, { silentMs: stuckAfterMs });
    expect(silent.alive()).toBe(false);
    expect(silent.illness?.()).toBe('the consumer of group g.retry has not heard from its group (no heartbeat, fetch or join) for 300 s');
  });

  it('is not alive while a consumer that dropped out of its group could not rejoin it, and says which', () => {
    const out = provider({ rejoinFailed: true });
    expect(out.alive()).toBe(false);
    expect(out.illness?.()).toBe('the consumer of group g dropped out of its group and could not rejoin');
  });

  it('is alive before either consumer has joined its group', () => {
    // Was "before the drainer has started": the drainer is now built with the ingress flow.
    expect(provider({ joined: false }, { joined: false }).alive()).toBe(true);
  });
});

describe('readiness (/readyz)', () => {
  it('is ready once every flow joined its group, not before', () => {
    expect(provider().ready()).toBe(true);
    expect(provider({ joined: false }).ready()).toBe(false);
    expect(provider({}, { joined: false }).ready()).toBe(false);
  });
});

describe('status (/v1/status)', () => {
  it('reports the ingress group from the first flow and retry.group from the second', async () => {
    const assigned = (topic: string) => [{ topic, partitions: [0] }];
    const flows = [
      { consumer: { crashed: () => false, joined: () => true, assignment: () => assigned('in') } },
      { consumer: { crashed: () => true, joined: () => false, assignment: () => assigned('in.retry.5s') } },
    ];
    const status = await createStatusProvider({
      config: { mode: 'enforce', group: 'g', topics: { ingress: 'in' }, retry: { group: 'g.retry', tiers: [{ topic: 'in.retry.5s' }] }, limiter: { onStoreError: 'park' } },
      flows,
      hold: { held: () => ({ messages: 2, bytes: 30 }) },
      guarded: { failures: () => 0, fallbackActive: () => false },
      sender: { failing: () => [trouble(990_000)] },
      now: () => 1_000_000,
    } as unknown as StatusDeps).status();
    expect(status.groups).toEqual([
      { groupId: 'g', joined: true, crashed: false, topics: ['in'], assigned: assigned('in') },
      { groupId: 'g.retry', joined: false, crashed: true, topics: ['in.retry.5s'], assigned: assigned('in.retry.5s') },
    ]);
    expect(status.held).toEqual({ messages: 2, bytes: 30 });
    expect(status.sendErrors).toEqual([{ destination: 'out', failingSinceMs: 10_000, failures: 9, code: 'TOPIC_AUTHORIZATION_FAILED', error: 'denied' }]);
  });
});
