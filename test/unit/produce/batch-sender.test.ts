import pino from 'pino';
import type { TopicMessages } from 'kafkajs';
import { createBatchSender, isTooLarge } from '../../../src/produce/batch-sender';

const logger = pino({ level: 'silent' });
const msg = (v: string) => ({ key: null, value: v });

describe('when several messages are sent in one tick', () => {
  it('sends them in one sendBatch with acks -1, in order, and resolves each', async () => {
    const calls: { topicMessages: TopicMessages[]; acks: number }[] = [];
    const sender = createBatchSender({ producer: { sendBatch: async (b) => calls.push(b) }, logger });
    await Promise.all([sender.send('a', msg('1')), sender.send('b', msg('2')), sender.send('a', msg('3'))]);
    expect(calls).toHaveLength(1);
    expect(calls[0].acks).toBe(-1);
    expect(calls[0].topicMessages).toEqual([
      { topic: 'a', messages: [msg('1'), msg('3')] },
      { topic: 'b', messages: [msg('2')] },
    ]);
    expect(sender.pending()).toBe(0);
  });
});

describe('when the broker fails a send with a retriable error', () => {
  it('retries the same batch before sending anything newer', async () => {
    const sent: string[][] = [];
    let failures = 1;
    const producer = {
      sendBatch: async (b: { topicMessages: TopicMessages[] }) => {
        if (failures-- > 0) throw Object.assign(new Error('leader moved'), { type: 'NOT_LEADER_FOR_PARTITION' });
        sent.push(b.topicMessages.flatMap((t) => t.messages.map((m) => String(m.value))));
      },
    };
    const sender = createBatchSender({ producer, logger, backoffMs: [5] });
    const first = sender.send('t', msg('1'));
    await new Promise((r) => setTimeout(r, 1));
    const second = sender.send('t', msg('2'));
    await Promise.all([first, second]);
    expect(sent.flat()).toEqual(['1', '2']);
  });
});

describe('when one message of a batch is too large for the broker', () => {
  it('rejects that message with MESSAGE_TOO_LARGE and still sends the others', async () => {
    const producer = {
      sendBatch: async (b: { topicMessages: TopicMessages[] }) => {
        if (b.topicMessages.some((t) => t.messages.some((m) => m.value === 'huge'))) {
          throw Object.assign(new Error('wrapped'), { cause: Object.assign(new Error('too large'), { type: 'MESSAGE_TOO_LARGE' }) });
        }
      },
    };
    const sender = createBatchSender({ producer, logger });
    const results = await Promise.allSettled([sender.send('t', msg('a')), sender.send('t', msg('huge')), sender.send('t', msg('b'))]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason.code).toBe('MESSAGE_TOO_LARGE');
  });

  it('recognises size refusals wrapped by kafkajs', () => {
    expect(isTooLarge({ type: 'RECORD_LIST_TOO_LARGE' })).toBe(true);
    expect(isTooLarge({ errors: [{ type: 'MESSAGE_TOO_LARGE' }] })).toBe(true);
    expect(isTooLarge({ type: 'NOT_LEADER_FOR_PARTITION' })).toBe(false);
  });
});
