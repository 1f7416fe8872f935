/**
 * Load the fixture's `offerLoad` cannot offer (its messages carry only `producer-id`):
 * - `offerWithHeaders`: the same paced producers (100 ms ticks, value `<id>:<seq>`, key `<id>`
 *   or `<id>-<seq mod keys>`), each message with extra headers;
 * - `offerManyIds`: one message per distinct producer id, ids given as raw header bytes;
 * - `sendOne`: single records (huge header sets, oversize values), acknowledged.
 * All return what the fixture's judgement reads (`Offered`).
 */
import { IHeaders, Kafka, logLevel, Message, Partitioners } from 'kafkajs';
import type { Offer, Offered } from '../../test/integration/retry/backlog-fixture';
import { sleep } from './faults';

export interface HeaderOffer extends Offer {
  /** Headers besides `producer-id` for message `seq`. */
  headers: (seq: number) => IHeaders;
}

const client = (brokers: string[], name: string): Kafka =>
  new Kafka({ clientId: `chaos-${name}-${process.pid}`, brokers, logLevel: logLevel.NOTHING });

type Sent = { value: string; key: string; at: number };

export const offerWithHeaders = async (brokers: string[], topic: string, offers: readonly HeaderOffer[]): Promise<Offered> => {
  const byProducer: Offered['byProducer'] = new Map(offers.map((o) => [o.id, []]));
  const producers = await Promise.all(offers.map(async (o) => {
    const producer = client(brokers, o.id).producer({ allowAutoTopicCreation: false, createPartitioner: Partitioners.DefaultPartitioner });
    await producer.connect();
    return producer;
  }));
  const startedAt = Date.now();
  await Promise.all(offers.map(async (o, i) => {
    const producer = producers[i];
    const total = Math.round(o.perSecond * o.seconds);
    const out = byProducer.get(o.id) as Sent[];
    let seq = 0;
    try {
      while (seq < total) {
        const tick = Math.floor((Date.now() - startedAt) / 100) + 1;
        const due = Math.min(total, Math.round((tick * o.perSecond) / 10));
        const messages: Message[] = [];
        for (; seq < due; seq += 1) {
          const key = (o.keys ?? 1) <= 1 ? o.id : `${o.id}-${seq % (o.keys as number)}`;
          messages.push({ key, value: `${o.id}:${seq}`, headers: { 'producer-id': o.id, ...o.headers(seq) } });
        }
        if (messages.length > 0) {
          await producer.send({ topic, messages, acks: -1 });
          const at = Date.now();
          for (const m of messages) out.push({ value: String(m.value), key: String(m.key), at });
        }
        if (seq < total) await sleep(Math.max(0, startedAt + tick * 100 - Date.now()));
      }
    } finally {
      await producer.disconnect();
    }
  }));
  return { byProducer, startedAt, endedAt: Date.now() };
};

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
