/**
 * Load the fixture's `offerLoad` cannot offer (paced producers with extra headers are its
 * `Offer.headers`):
 * - `offerManyIds`: one message per distinct producer id, ids given as raw header bytes;
 * - `sendOne`: single records (huge header sets, oversize values), acknowledged.
 * All return what the fixture's judgement reads (`Offered`).
 */
import { IHeaders, Kafka, logLevel, Message, Partitioners } from 'kafkajs';
import type { Offered } from '../../test/integration/retry/backlog-fixture';
import { sleep } from './faults';

const client = (brokers: string[], name: string): Kafka =>
  new Kafka({ clientId: `chaos-${name}-${process.pid}`, brokers, logLevel: logLevel.NOTHING });

type Sent = { value: string; key: string; at: number };

/**
 * One message per id (`ids[i]` raw bytes in `producer-id`), value `<label>:<i>`, key `k<i>`, in
 * batches of `batch`, at most `perSecond` messages a second. Judged as one producer `label`.
 */
export const offerManyIds = async (brokers: string[], topic: string, label: string, ids: readonly Buffer[], perSecond: number, batch = 500): Promise<Offered> => {
  const out: Sent[] = [];
  const producer = client(brokers, label).producer({ allowAutoTopicCreation: false, createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  const startedAt = Date.now();
  try {
    for (let from = 0; from < ids.length; from += batch) {
      const messages: Message[] = [];
      for (let i = from; i < Math.min(ids.length, from + batch); i += 1) {
        messages.push({ key: `k${i}`, value: `${label}:${i}`, headers: { 'producer-id': ids[i] as Buffer } });
      }
      await producer.send({ topic, messages, acks: -1 });
      const at = Date.now();
      for (const m of messages) out.push({ value: String(m.value), key: String(m.key), at });
      await sleep(Math.max(0, startedAt + ((from + batch) * 1000) / perSecond - Date.now()));
    }
  } finally {
    await producer.disconnect();
  }
  return { byProducer: new Map([[label, out]]), startedAt, endedAt: Date.now() };
};

/** Sends one record and resolves once it was acknowledged (with its value and time, as `Offered` keeps them). */
export const sendOne = async (brokers: string[], topic: string, message: { key: string; value: string; headers: IHeaders }): Promise<Sent> => {
  const producer = client(brokers, 'one').producer({ allowAutoTopicCreation: false, createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  try {
    await producer.send({ topic, messages: [message], acks: -1 });
    return { value: message.value, key: message.key, at: Date.now() };
  } finally {
    await producer.disconnect();
  }
};
