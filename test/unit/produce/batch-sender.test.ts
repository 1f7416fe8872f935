import { Writable } from 'node:stream';
import pino from 'pino';
import type { TopicMessages } from 'kafkajs';
import { appendTimeOf, createBatchSender, isTooLarge, sendErrorCode } from '../../../src/produce/batch-sender';

const logger = pino({ level: 'silent' });
const msg = (v: string) => ({ key: null, value: v });

describe('when several messages are sent in one tick', () => {
  it('sends each topic\'s in one sendBatch with acks -1, in order, and resolves each', async () => {
    const calls: { topicMessages: { topic: string; messages: unknown[] }[]; acks: number }[] = [];
    const sender = createBatchSender({ producer: { sendBatch: async (b) => calls.push(b) }, logger });
    await Promise.all([sender.send('a', msg('1')), sender.send('b', msg('2')), sender.send('a', msg('3'))]);
    expect(calls.map((c) => c.acks)).toEqual([-1, -1]);
    expect(calls.flatMap((c) => c.topicMessages)).toEqual([
      { topic: 'a', messages: [msg('1'), msg('3')] },
      { topic: 'b', messages: [msg('2')] },
    ]);
    expect(sender.pending()).toBe(0);
  });

  it('sends what continuations already queued with them add (one fetch\'s partitions) in the same request, before the next check phase', async () => {
    const requests: string[][] = [];
    const sender = createBatchSender({ producer: { sendBatch: async (b) => requests.push(b.topicMessages.flatMap((t) => t.messages.map((m) => String(m.value)))) }, logger });
    // Like the decider's answer resolving each partition's handler: three continuations queued at once.
    const answered = Promise.resolve();
    const sent = [1, 2, 3].map((n) => answered.then(() => sender.send('a', msg(String(n)))));
    const checkPhase = new Promise<string[][]>((resolve) => setImmediate(() => resolve(requests.map((r) => [...r]))));
    expect(await checkPhase).toEqual([['1', '2', '3']]); // under way already, as one request
    await Promise.all(sent);
  });
});

describe('when the broker answers with its append time', () => {
  // kafkajs answers sendBatch with one record per partition; logAppendTime is "-1" unless the topic records LogAppendTime.
  const answering = (logAppendTime: string) => ({
    sendBatch: async (b: { topicMessages: TopicMessages[] }) => b.topicMessages.map((t) => ({ topicName: t.topic, partition: 0, errorCode: 0, logAppendTime })),
  });

  it('resolves each send with it (a topic with LogAppendTime)', async () => {
    const sender = createBatchSender({ producer: answering('1795756148062'), logger });
    const answers = await Promise.all([sender.send('a', msg('1')), sender.send('a', msg('2'))]);
    expect(answers).toEqual([{ appendedAt: 1795756148062, slow: false }, { appendedAt: 1795756148062, slow: false }]);
    // One request, one answer for its messages.
    expect(answers[0]).toBe(answers[1]);
  });

  it('resolves with undefined when the topic keeps the producer\'s timestamps ("-1") or the answer has none', async () => {
    await expect(createBatchSender({ producer: answering('-1'), logger }).send('a', msg('1'))).resolves.toEqual({ appendedAt: undefined, slow: false });
    expect(appendTimeOf(undefined)).toBeUndefined();
    expect(appendTimeOf([])).toBeUndefined();
    expect(appendTimeOf([{ logAppendTime: 'x' }])).toBeUndefined();
  });
});

/**
 * Kafka answers a produce per partition; kafkajs throws for the whole request when one
 * partition failed. This broker appends every partition of a request but the refused one.
 */
const partitionRefusingBroker = (refusals: number) => {
  const appended: string[] = [];
  const requests: number[][] = [];
  const producer = {
    sendBatch: async (b: { topicMessages: TopicMessages[] }) => {
      const messages = b.topicMessages.flatMap((t) => t.messages);
      requests.push([...new Set(messages.map((m) => m.partition ?? -1))]);
      let refused = false;
      for (const m of messages) {
        if (m.partition === 1 && refusals > 0) refused = true;
        else appended.push(String(m.value));
      }
      if (refused) {
        refusals -= 1;
        throw Object.assign(new Error('This server is not the leader for that topic-partition'), { type: 'NOT_LEADER_FOR_PARTITION' });
      }
    },
  };
  return { appended, requests, producer };
};

describe('when one partition refuses a send that the other partitions of the topic would append (leader moving, topic just created)', () => {
  it('sends each partition in its own request, so the retry repeats nothing another partition appended', async () => {
    const { appended, requests, producer } = partitionRefusingBroker(2);
    const sender = createBatchSender({ producer, logger, backoffMs: [5] });
    const values = Array.from({ length: 30 }, (_, i) => String(i));
    await Promise.all(values.map((v, i) => sender.send('down', { key: null, value: v, partition: i % 3 })));
    expect([...appended].sort()).toEqual([...values].sort());
    expect(requests.every((partitions) => partitions.length === 1)).toBe(true);
    expect(requests.filter(([p]) => p === 1)).toHaveLength(3);
  });

  it('reports the topic failing once, with the failures of its partitions summed', async () => {
    const producer = {
      sendBatch: async () => {
        throw Object.assign(new Error('gone'), { type: 'UNKNOWN_TOPIC_OR_PARTITION' });
      },
    };
    const sender = createBatchSender({ producer, logger, backoffMs: [50] });
    const sends = [0, 1, 2].map((partition) => sender.send('down', { key: null, value: 'x', partition }));
    await new Promise((r) => setTimeout(r, 20));
    expect(sender.failing()).toEqual([expect.objectContaining({ destination: 'down', failures: 3, code: 'UNKNOWN_TOPIC_OR_PARTITION' })]);
    sender.close();
    expect((await Promise.allSettled(sends)).map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected']);
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

/** A broker that appends each partition's records unless they exceed `limit` bytes, like Kafka. */
const partialBroker = (limit: number) => {
  const appended: string[] = [];
  const producer = {
    sendBatch: async (b: { topicMessages: TopicMessages[] }) => {
      let refused = false;
      for (const { topic, messages } of b.topicMessages) {
        const byPartition = new Map<string, string[]>();
        for (const m of messages) {
          const key = `${topic}/${m.partition ?? 0}`;
          byPartition.set(key, [...(byPartition.get(key) ?? []), String(m.value)]);
        }
        for (const values of byPartition.values()) {
          if (values.reduce((n, v) => n + v.length, 0) > limit) refused = true;
          else appended.push(...values);
        }
      }
      if (refused) throw Object.assign(new Error('too large'), { type: 'MESSAGE_TOO_LARGE' });
    },
  };
  return { appended, producer };
};

const sized = (id: number, bytes: number, partition?: number) => ({ key: null, value: `${id}:`.padEnd(bytes, 'x'), partition });

describe('when a burst for one partition is bigger than the broker accepts in one record batch', () => {
  it('sends it in requests of at most maxBatchBytes, so every message is appended exactly once', async () => {
    const { appended, producer } = partialBroker(1024 * 1024);
    const sender = createBatchSender({ producer, logger, maxBatchBytes: 512 * 1024 });
    const sends = [];
    for (let i = 0; i < 3000; i += 1) sends.push(sender.send('tier', i % 100 === 0 ? sized(i, 100, 1) : sized(i, 1024, 0)));
    await Promise.all(sends);
    expect(appended.map((v) => Number(v.split(':')[0])).sort((a, b) => a - b)).toEqual(Array.from({ length: 3000 }, (_, i) => i));
  });

  it('sends a message bigger than maxBatchBytes alone, in order with the others', async () => {
    const requests: string[][] = [];
    const sender = createBatchSender({ producer: { sendBatch: async (b) => requests.push(b.topicMessages.flatMap((t) => t.messages.map((m) => String(m.value).split(':')[0]))) }, logger, maxBatchBytes: 10_000 });
    await Promise.all([sender.send('t', sized(1, 100)), sender.send('t', sized(2, 20_000)), sender.send('t', sized(3, 100))]);
    expect(requests).toEqual([['1'], ['2'], ['3']]);
  });
});

describe('when a topic accepts less than maxBatchBytes and a request of several messages is refused', () => {
  it('resends it in halves, appends every message and rejects only the oversize one', async () => {
    const { appended, producer } = partialBroker(3000);
    const sender = createBatchSender({ producer, logger, maxBatchBytes: 512 * 1024 });
    const sends = [sender.send('t', sized(1, 1000, 0)), sender.send('t', sized(2, 1000, 0)), sender.send('t', sized(3, 4000, 0))];
    sends.push(sender.send('t', sized(4, 1000, 0)), sender.send('t', sized(5, 1000, 0)));
    const results = await Promise.allSettled(sends);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    expect(appended.map((v) => v.split(':')[0]).sort()).toEqual(['1', '2', '4', '5']);
  });

  it('sendAll: one promise for them all, resolved once every one settled, with the oversize one\'s error at its index', async () => {
    const { appended, producer } = partialBroker(3000);
    const sender = createBatchSender({ producer, logger, maxBatchBytes: 512 * 1024 });
    const { errors } = await sender.sendAll('t', [sized(1, 1000, 0), sized(2, 1000, 1), sized(3, 4000, 0), sized(4, 1000, 1), sized(5, 1000, 0)]);
    expect(Object.entries(errors).map(([i, e]) => [i, (e as { code?: string }).code])).toEqual([['2', 'MESSAGE_TOO_LARGE']]);
    expect(appended.map((v) => v.split(':')[0]).sort()).toEqual(['1', '2', '4', '5']);
    expect(sender.pending()).toBe(0);
    expect(await sender.sendAll('t', [])).toEqual({ errors: [], slow: false });
  });
});

describe('when one topic refuses every send (deleted, denied)', () => {
  it('keeps sending to the other topics, retries the refused messages in order, counts each failure, reports the topic failing until a send succeeds', async () => {
    let broken = true;
    const appended: string[] = [];
    const producer = {
      sendBatch: async (b: { topicMessages: { topic: string; messages: { value: unknown }[] }[] }) => {
        for (const { topic, messages } of b.topicMessages) {
          if (topic === 'gone' && broken) throw Object.assign(new Error('This server does not host this topic-partition'), { type: 'UNKNOWN_TOPIC_OR_PARTITION' });
          appended.push(...messages.map((m) => `${topic}:${String(m.value)}`));
        }
      },
    };
    const errors: string[] = [];
    let clock = 1000;
    const sender = createBatchSender({ producer, logger, backoffMs: [5], onError: (d, code) => errors.push(`${d} ${code}`), now: () => clock });
    const gone = [sender.send('gone', msg('g1')), sender.send('gone', msg('g2'))];
    await Promise.all([sender.send('down', msg('f1')), sender.send('tier', msg('p1'))]);
    await new Promise((r) => setTimeout(r, 30));
    const late = sender.send('gone', msg('g3'));
    await Promise.all([sender.send('down', msg('f2'))]);
    expect(appended).toEqual(['down:f1', 'tier:p1', 'down:f2']);
    expect(errors.length).toBeGreaterThanOrEqual(2);
    expect(new Set(errors)).toEqual(new Set(['gone UNKNOWN_TOPIC_OR_PARTITION']));
    clock = 61_000;
    expect(sender.failing()).toEqual([{ destination: 'gone', since: 1000, failures: errors.length, code: 'UNKNOWN_TOPIC_OR_PARTITION', error: expect.stringContaining('does not host') }]);
    expect(sender.pending()).toBe(3);
    broken = false;
    await Promise.all([...gone, late]);
    expect(appended.filter((v) => v.startsWith('gone'))).toEqual(['gone:g1', 'gone:g2', 'gone:g3']);
    expect(sender.failing()).toEqual([]);
  });

  it('names the error by the broker\'s code when kafkajs wraps one, else by the error\'s name', () => {
    const named = (name: string, more: object = {}) => Object.assign(new Error(name), { name, ...more });
    expect(sendErrorCode(named('KafkaJSNumberOfRetriesExceeded', { originalError: named('KafkaJSProtocolError', { type: 'TOPIC_AUTHORIZATION_FAILED' }) }))).toBe('TOPIC_AUTHORIZATION_FAILED');
    expect(sendErrorCode(named('KafkaJSAggregateError', { errors: [named('KafkaJSProtocolError', { type: 'INVALID_RECORD' })] }))).toBe('INVALID_RECORD');
    expect(sendErrorCode(named('KafkaJSNumberOfRetriesExceeded', { cause: named('KafkaJSConnectionError') }))).toBe('KafkaJSConnectionError');
  });
});

describe('when one partition\'s broker answers slowly for good and the others quickly', () => {
  /** Requests to partition 0 take 200 ms, to the others 3 ms (on a clock the fake broker moves). */
  const slowLeader = () => {
    let clock = 0;
    const producer = {
      sendBatch: async (b: { topicMessages: TopicMessages[] }) => {
        clock += b.topicMessages[0].messages[0].partition === 0 ? 300 : 3;
        return [{ logAppendTime: '-1' }];
      },
    };
    return { producer, now: () => clock };
  };

  it('answers the sends to that partition slow once its requests of ten seconds took two seconds past the slack, and the others not', async () => {
    const { producer, now } = slowLeader();
    const sender = createBatchSender({ producer, logger, now, slowBounds: { afterMs: 100, outageMs: 500 } });
    const slow0: boolean[] = [];
    const slow1: boolean[] = [];
    // One request at a time, alternating between the partitions.
    for (let k = 0; k < 12; k += 1) {
      slow0.push((await sender.send('t', { ...msg(`a${k}`), partition: 0 })).slow);
      slow1.push((await sender.send('t', { ...msg(`b${k}`), partition: 1 })).slow);
    }
    // Slow from its tenth request (2,000 ms past the slack; SLOW_MIN_REQUESTS), the first nine too few to judge.
    expect(slow0).toEqual([...Array<boolean>(9).fill(false), true, true, true]);
    expect(slow1.every((s) => !s)).toBe(true);
    // A unit with a message to each: answered slow, as one of its partitions is.
    expect((await sender.sendAll('t', [{ ...msg('c'), partition: 1 }, { ...msg('d'), partition: 0 }])).slow).toBe(true);
    expect((await sender.sendAll('t', [{ ...msg('e'), partition: 1 }, { ...msg('f'), partition: 2 }])).slow).toBe(false);
  });

  it('logs when a partition turns slow and when it is quick again, naming it', async () => {
    let clock = 0;
    let delay = 300;
    const producer = { sendBatch: async () => ((clock += delay), [{ logAppendTime: '-1' }]) };
    const lines: { level: number; msg: string; destination?: string; partition?: number }[] = [];
    const logged = pino({ level: 'info' }, new Writable({ write: (chunk, _e, done) => (lines.push(JSON.parse(String(chunk))), done()) }));
    const sender = createBatchSender({ producer, logger: logged, now: () => clock, slowBounds: { afterMs: 100, outageMs: 500 } });
    for (let k = 0; k < 12; k += 1) await sender.send('t', { ...msg(`a${k}`), partition: 3 });
    delay = 3;
    // Slow from the tenth (2,000 ms past the slack); then a quick request every 100 ms: slow while the
    // window holds seconds 0–3 (600 ms past the slack each), quick from second 10 (1,800).
    for (let k = 0; clock < 9_900; k += 1) {
      clock += 97;
      await sender.send('t', { ...msg(`b${k}`), partition: 3 });
    }
    expect(lines).toHaveLength(1);
    clock += 200;
    await sender.send('t', { ...msg('c'), partition: 3 });
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines.map((l) => [l.level, l.destination, l.partition, l.msg.split(':')[0]])).toEqual([
      [40, 't', 3, 'the partition\'s broker is slow (its requests of the last 10 s took longer than slowAfterMs by more than twice slowAfterMs of each second)'],
      [30, 't', 3, 'the partition\'s broker answers quickly again'],
    ]);
  });

  it('never answers slow without the bounds to judge by', async () => {
    const { producer, now } = slowLeader();
    const sender = createBatchSender({ producer, logger, now });
    const answers = [];
    for (let k = 0; k < 12; k += 1) answers.push(await sender.send('t', { ...msg(`a${k}`), partition: 0 }));
    expect(answers.some((a) => a.slow)).toBe(false);
  });
});
