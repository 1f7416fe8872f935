import { consumeAll, headerValues, waitForMessages, type ConsumedMessage } from '../../helpers/kafka';
import { waitFor } from '../../helpers/wait';
import { createRetryFixture, type Drainer, parkInfo, type RetryFixture } from './retry-fixture';

const ids = (prefix: string, n: number): string[] => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);
const idOf = (m: ConsumedMessage): string => headerValues(m.headers, 'test-id')[0];

describe('the drainer of the retry tiers', () => {
  let fx: RetryFixture;
  let drainer: Drainer;
  const tier = (label: string) => `${fx.config.topics.retry}.${label}`;

  beforeAll(async () => {
    fx = await createRetryFixture({ SLUICE_RETRY_MAX_ATTEMPTS: '2', SLUICE_RETRY_MAX_AGE: '1m' });
    drainer = await fx.startDrainer();
    await waitFor(() => drainer.joined(), { message: 'the drainer to join retry.group' });
  });

  afterAll(async () => {
    await drainer?.stop();
    await fx?.close();
  });

  describe('when delayed messages wait longer than their tier', () => {
    it('hops them once and releases none before its sluice-not-before, without charging the store', async () => {
      // Slots one interval apart (the default rule: 20/s), as the limiter reserves them. Read on
      // the 3s tier's delay with ~3 s left, more than hold.maxMs (1 s) + HOP_MARGIN_MS (1 s): each
      // hops, to the 3s tier again (the 1s tier would bring it within a second of its slot at best:
      // too little to spare behind other records), and is read back 1 s ahead of its slot.
      // Changed on purpose: with 1.5 s left it used to hop down to the 1s tier; now it is held.
      const notBefore = Date.now() + 6000;
      const batch = ids('hop', 10).map((id, i) => ({ id, info: parkInfo('hop', { notBefore: notBefore + 50 * i }) }));
      await fx.park(tier('3s'), batch);
      const released = await waitForMessages(fx.kafka, fx.config.topics.downstream, (all) => batch.every(({ id }) => all.some((m) => idOf(m) === id)), { timeoutMs: 20_000 });
      for (const m of released.filter((x) => idOf(x).startsWith('hop-'))) {
        expect(Number(m.timestamp)).toBeGreaterThanOrEqual(notBefore);
        expect(headerValues(m.headers, 'sluice-attempt')).toEqual(['1']);
      }
      const onTier = await consumeAll(fx.kafka, tier('3s'));
      const written = onTier.filter((m) => idOf(m).startsWith('hop-')).map(idOf).sort();
      expect(written).toEqual(batch.flatMap((b) => [b.id, b.id]).sort());
      expect((await consumeAll(fx.kafka, tier('1s'))).filter((m) => idOf(m).startsWith('hop-'))).toEqual([]);
      const limit = fx.ruleOf('hop').limit;
      expect((await fx.store.inspect('hop', limit as never)).backlogMs).toBe(0);
    });
  });

  describe('when a delayed message is processed more than 5 s late (an outage)', () => {
    it('decides it again (its slot went unused), charging the store once', async () => {
      const late = ids('late', 1).map((id) => ({ id, info: parkInfo('tenth-late', { notBefore: Date.now() - 30_000 }) }));
      await fx.park(tier('1s'), late, Date.now() - 2000);
      const out = await waitForMessages(fx.kafka, fx.config.topics.downstream, (all) => late.every(({ id }) => all.some((m) => idOf(m) === id)));
      const mine = out.filter((m) => idOf(m).startsWith('late-'));
      expect(mine.map((m) => headerValues(m.headers, 'sluice-attempt')[0])).toEqual(['2']);
      const limit = fx.ruleOf('tenth-late').limit;
      const state = await fx.store.inspect('tenth-late', limit as never);
      expect(state.backlogMs).toBeGreaterThan(5000);
    });
  });

  describe('when overflow messages keep being refused', () => {
    it('dead-letters them after retry.maxAttempts decisions, keeping user headers', async () => {
      const batch = ids('slow', 3).map((id) => ({ id, info: parkInfo('slow-dead', { reason: { kind: 'overflow', limit: 'rate' } }) }));
      await fx.park(tier('1s'), batch, Date.now() - 1000);
      const dead = await waitForMessages(fx.kafka, fx.config.topics.deadLetter, (all) => all.filter((m) => idOf(m).startsWith('slow-')).length >= 2);
      const mine = dead.filter((m) => idOf(m).startsWith('slow-'));
      expect(mine.map((m) => headerValues(m.headers, 'sluice-dead-letter-reason')[0])).toEqual(['max-attempts', 'max-attempts']);
      expect(mine.map((m) => headerValues(m.headers, 'sluice-attempt')[0])).toEqual(['2', '2']);
      const forwarded = await waitForMessages(fx.kafka, fx.config.topics.downstream, (all) => all.some((m) => idOf(m).startsWith('slow-')));
      const seen = new Set([...mine, ...forwarded.filter((m) => idOf(m).startsWith('slow-'))].map(idOf));
      expect([...seen].sort()).toEqual(batch.map((b) => b.id).sort());
    });
  });

  describe('when an overflow message is older than retry.maxAge', () => {
    it('dead-letters it with reason max-age', async () => {
      const old = [{ id: 'old-0', info: parkInfo('old', { firstSeen: Date.now() - 61_000, reason: { kind: 'overflow', limit: 'rate' } }) }];
      await fx.park(tier('1s'), old, Date.now() - 1000);
      const dead = await waitForMessages(fx.kafka, fx.config.topics.deadLetter, (all) => all.some((m) => idOf(m) === 'old-0'));
      expect(headerValues(dead.find((m) => idOf(m) === 'old-0')?.headers ?? {}, 'sluice-dead-letter-reason')).toEqual(['max-age']);
    });
  });

  describe('when a retry message has malformed sluice headers', () => {
    it('counts it and decides it again', async () => {
      const before = fx.metrics.malformed;
      const { produce } = await import('../../helpers/kafka');
      await produce(fx.kafka, tier('1s'), [{ key: 'm', value: 'm', timestamp: String(Date.now() - 1500), headers: { 'test-id': 'bad-0', 'producer-id': 'slow-bad', 'sluice-attempt': 'two', 'sluice-not-before': 'soon' } }]);
      const out = await waitForMessages(fx.kafka, fx.config.topics.downstream, (all) => all.some((m) => idOf(m) === 'bad-0'));
      const m = out.find((x) => idOf(x) === 'bad-0');
      expect(headerValues(m?.headers ?? {}, 'sluice-attempt')).toEqual(['2']);
      expect(headerValues(m?.headers ?? {}, 'sluice-not-before')).toEqual([]);
      expect(fx.metrics.malformed).toBe(before + 1);
      const limit = fx.ruleOf('slow-bad').limit;
      expect((await fx.store.inspect('slow-bad', limit as never)).backlogMs).toBeGreaterThan(3_500_000);
    });
  });

  describe('when everything was handled', () => {
    it('commits the tiers to their end', async () => {
      const admin = fx.kafka.admin();
      await admin.connect();
      try {
        await waitFor(async () => {
          const committed = await admin.fetchOffsets({ groupId: fx.config.retry.group, topics: [tier('1s'), tier('3s')] });
          for (const { topic, partitions } of committed) {
            const ends = await admin.fetchTopicOffsets(topic);
            for (const end of ends) {
              const at = partitions.find((p) => p.partition === end.partition)?.offset ?? '-1';
              if (end.high !== '0' && at !== end.high) return false;
            }
          }
          return true;
        }, { timeoutMs: 15_000, message: 'retry.group commits at the end of every tier partition' });
      } finally {
        await admin.disconnect();
      }
    });
  });
});
