import pino from 'pino';
import { openDrain } from '../../../src/app/wiring-commands';
import { runDrain } from '../../../src/drain/drain-command';
import type { DrainOptions } from '../../../src/drain/drain-plan';
import { consumeAll, headerValues, type ConsumedMessage } from '../../helpers/kafka';
import { waitFor } from '../../helpers/wait';
import { createRetryFixture, parkInfo, type RetryFixture } from './retry-fixture';

const idOf = (m: ConsumedMessage): string => headerValues(m.headers, 'test-id')[0];
const options = (change: Partial<DrainOptions> = {}): DrainOptions => ({ ignoreDelay: false, dryRun: false, force: false, ...change });

describe('sluice drain', () => {
  let fx: RetryFixture;
  let out = '';
  const tier = (label: string) => `${fx.config.topics.retry}.${label}`;
  const drain = (opts: DrainOptions) => {
    out = '';
    const text = { write: (s: string) => (out += s) };
    return runDrain({ ...fx.deps, stdout: text, stderr: text }, opts);
  };
  const committed = async (topic: string): Promise<number> => {
    const admin = fx.kafka.admin();
    await admin.connect();
    try {
      const [{ partitions }] = await admin.fetchOffsets({ groupId: fx.config.retry.group, topics: [topic] });
      return partitions.reduce((sum, p) => sum + Math.max(0, Number(p.offset)), 0);
    } finally {
      await admin.disconnect();
    }
  };

  beforeAll(async () => {
    fx = await createRetryFixture({ SLUICE_RETRY_MAX_ATTEMPTS: '3' });
  });

  afterAll(async () => {
    await fx?.close();
  });

  describe('when a topic it needs does not exist', () => {
    it('refuses before it starts (TOPIC_INVALID, exit 2), naming the topic', async () => {
      const missing = `${fx.config.topics.retry}.nowhere`;
      await expect(openDrain(fx.config, pino({ level: 'silent' }), missing)).rejects.toMatchObject({
        code: 'TOPIC_INVALID', message: expect.stringContaining(`missing topic(s): ${missing}`),
      });
    });
  });

  describe('when run with --dry-run', () => {
    it('reports per producer what would happen and changes nothing', async () => {
      await fx.park(tier('3s'), ['a', 'b', 'c'].map((id) => ({ id: `dry-${id}`, info: parkInfo('dry-p', { notBefore: Date.now() + 60_000 }) })));
      await fx.park(tier('1s'), [{ id: 'dry-o', info: parkInfo('dry-q', { reason: { kind: 'overflow', limit: 'rate' } }) }]);
      const summary = await drain(options({ dryRun: true }));
      expect(summary.rows()).toEqual([
        ['dry-p', { forwarded: 3, reparked: 0, deadLettered: 0, toDecide: 0 }],
        ['dry-q', { forwarded: 0, reparked: 0, deadLettered: 0, toDecide: 1 }],
      ]);
      expect(out).toContain('to decide again');
      expect(await committed(tier('3s'))).toBe(0);
      expect(await consumeAll(fx.kafka, fx.config.topics.downstream)).toEqual([]);
    });
  });

  describe('when run with --max and --ignore-delay', () => {
    it('forwards at most N messages now, commits exactly those, and the rest on the next run', async () => {
      const summary = await drain(options({ ignoreDelay: true, max: 2 }));
      expect(summary.total()).toBe(2);
      const first = await waitFor(async () => {
        const all = await consumeAll(fx.kafka, fx.config.topics.downstream);
        return all.length === 2 ? all : undefined;
      });
      expect(await committed(tier('1s')) + (await committed(tier('3s')))).toBe(2);
      const rest = await drain(options({ ignoreDelay: true }));
      expect(rest.total()).toBe(2);
      const all = await waitFor(async () => {
        const got = await consumeAll(fx.kafka, fx.config.topics.downstream);
        return got.length === 4 ? got : undefined;
      });
      expect(new Set(all.map(idOf))).toEqual(new Set(['dry-a', 'dry-b', 'dry-c', 'dry-o']));
      expect(first.every((m) => all.some((x) => idOf(x) === idOf(m)))).toBe(true);
    });
  });

  describe('when the retry group has other members', () => {
    it('refuses on the tiers (exit 1) unless --force', async () => {
      const drainer = await fx.startDrainer();
      try {
        await waitFor(() => drainer.joined(), { message: 'the drainer to join' });
        await expect(drain(options())).rejects.toMatchObject({ code: 'ARGUMENT_INVALID', message: expect.stringContaining('--force') });
        const forced = await drain(options({ force: true }));
        expect(forced.total()).toBe(0);
        // The dead-letter topic is drained while the sidecar's drainer holds the tiers: each
        // member of retry.group gets the partitions of the topics it subscribed to.
        await fx.park(fx.config.topics.deadLetter, [{ id: 'dl-busy', info: parkInfo('dl-p', { reason: { kind: 'overflow', limit: 'rate' } }) }]);
        const beside = await drain(options({ topic: fx.config.topics.deadLetter }));
        expect(beside.rows()).toEqual([['dl-p', { forwarded: 1, reparked: 0, deadLettered: 0, toDecide: 0 }]]);
      } finally {
        await drainer.stop();
      }
    });
  });

  describe('when draining the dead-letter topic', () => {
    it('decides every message again as new, forwards what is admitted and commits as retry.group', async () => {
      const now = Date.now();
      const dead = ['x', 'y'].map((id) => ({ id: `dl-${id}`, info: parkInfo('dl-p', { attempt: 3, firstSeen: now - 86_400_000, reason: { kind: 'overflow', limit: 'rate' } }) }));
      await fx.park(fx.config.topics.deadLetter, dead);
      const summary = await drain(options({ topic: fx.config.topics.deadLetter }));
      expect(summary.rows()).toEqual([['dl-p', { forwarded: 2, reparked: 0, deadLettered: 0, toDecide: 0 }]]);
      const down = await consumeAll(fx.kafka, fx.config.topics.downstream);
      const redriven = down.filter((m) => ['dl-x', 'dl-y'].includes(idOf(m)));
      expect(redriven.map((m) => headerValues(m.headers, 'sluice-attempt')[0])).toEqual(['1', '1']);
      expect(await committed(fx.config.topics.deadLetter)).toBe(3);
      const again = await drain(options({ topic: fx.config.topics.deadLetter }));
      expect(again.total()).toBe(0);
    });
  });

  describe('when everything was drained', () => {
    it('has every parked id downstream exactly once', async () => {
      const down = await consumeAll(fx.kafka, fx.config.topics.downstream);
      const ids = down.map(idOf).sort();
      expect(ids).toEqual(['dl-busy', 'dl-x', 'dl-y', 'dry-a', 'dry-b', 'dry-c', 'dry-o']);
    });
  });
});
