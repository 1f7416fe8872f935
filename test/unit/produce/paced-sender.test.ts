import type { Message } from 'kafkajs';
import { systemClock } from '../../../src/clock';
import { createHoldScheduler } from '../../../src/hold/hold-scheduler';
import { createReleaseLanes } from '../../../src/hold/release-lanes';
import type { Sender } from '../../../src/produce/batch-sender';
import { createPacedSender } from '../../../src/produce/paced-sender';

const recording = () => {
  const sent: { topic: string; value: string; at: number }[] = [];
  const sender: Sender = {
    send: async (topic, m) => void sent.push({ topic, value: String(m.value), at: Date.now() }),
    flush: async () => undefined,
    pending: () => 0,
    close: () => undefined,
  };
  return { sent, sender };
};

const msg = (producer: string, value: string): Message => ({ key: producer, value });

describe('when several downstream messages of one producer are sent at once', () => {
  it('sends them spaced (never closer than half an interval), in order, and flush waits for all of them', async () => {
    const { sent, sender } = recording();
    const hold = createHoldScheduler({ clock: systemClock, maxMessages: 100, maxBytes: 1e6 });
    const paced = createPacedSender({
      sender, lanes: createReleaseLanes({ hold, clock: systemClock }), downstream: 'out',
      producerOf: (m) => String(m.key), spacingOf: () => 30,
    });
    void paced.send('out', msg('p', '1'));
    void paced.send('out', msg('p', '2'));
    void paced.send('out', msg('p', '3'));
    void paced.send('out', msg('q', 'x'));
    void paced.send('retry', msg('p', 'parked'));
    await paced.flush();
    expect(sent.map((s) => s.value)).toEqual(['1', 'x', 'parked', '2', '3']);
    // Lanes follow ideal slots: a late timer before an on-time one brings two sends closer than 30, never below 15.
    expect(sent[4].at - sent[3].at).toBeGreaterThanOrEqual(15);
    hold.close();
  });
});
