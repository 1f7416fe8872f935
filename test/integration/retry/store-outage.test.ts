import { consumeAll, headerValues, waitForMessages, type ConsumedMessage } from '../../helpers/kafka';
import { waitFor } from '../../helpers/wait';
import { createRetryFixture, type Drainer, parkInfo, type RetryFixture } from './retry-fixture';

const idOf = (m: ConsumedMessage): string => headerValues(m.headers, 'test-id')[0];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('when the store fails under limiter.onStoreError = park', () => {
  let fx: RetryFixture;
  let drainer: Drainer;
  const tier = (label: string) => `${fx.config.topics.retry}.${label}`;

  beforeAll(async () => {
    fx = await createRetryFixture({ SLUICE_ON_STORE_ERROR: 'park', SLUICE_RETRY_MAX_ATTEMPTS: '2' });
    drainer = await fx.startDrainer();
    await waitFor(() => drainer.joined(), { message: 'the drainer to join' });
  });

  afterAll(async () => {
    await drainer?.stop();
    await fx?.close();
  });

  it('pauses instead of burning attempts, and decides them once the store answers again', async () => {
    fx.setStoreDown(true);
    // Each its own not-before, so a fetch's messages are decided as of different instants: several
    // requests in one round (the store's decideMany), not one producer's single call.
    const now = Date.now();
    const batch = ['a', 'b', 'c'].map((id, i) => ({ id: `out-${id}`, info: parkInfo('outage', { notBefore: now - 10 * i, reason: { kind: 'overflow', limit: 'rate' } }) }));
    await fx.park(tier('1s'), batch, Date.now() - 1000);
    // Several decide attempts fail meanwhile (the stall is one tier-1 delay long): nothing moves.
    await sleep(3500);
    expect(await consumeAll(fx.kafka, fx.config.topics.downstream)).toEqual([]);
    expect(await consumeAll(fx.kafka, fx.config.topics.deadLetter)).toEqual([]);
    expect((await consumeAll(fx.kafka, tier('1s'))).length).toBe(3);
    fx.setStoreDown(false);
    const out = await waitForMessages(fx.kafka, fx.config.topics.downstream, 3);
    expect(out.map(idOf).sort()).toEqual(['out-a', 'out-b', 'out-c']);
    expect(out.map((m) => headerValues(m.headers, 'sluice-attempt')[0])).toEqual(['2', '2', '2']);
  });
});
