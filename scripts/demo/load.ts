/**
 * The synthetic load: every 100 ms each producer sends its share of its offered rate to the
 * ingress topic (header producer-id, a numbered value), for a fixed time (a producer with
 * idleFromS stops offering then). Counts what it sent.
 */
import { type Kafka, type Message, Partitioners } from 'kafkajs';
import type { DemoProducer } from './demo-plan';

export interface Load {
  offered(id: string): number;
  done: Promise<void>;
  stop(): void;
}

export const startLoad = async (kafka: Kafka, topic: string, producers: readonly DemoProducer[], seconds: number): Promise<Load> => {
  const producer = kafka.producer({ allowAutoTopicCreation: false, createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  const sent = new Map(producers.map((p) => [p.id, 0]));
  const started = Date.now();
  let stopped = false;
  const tick = async (): Promise<void> => {
    const elapsed = (Date.now() - started) / 1000;
    const messages: Message[] = [];
    for (const p of producers) {
      const due = Math.floor(p.rate * Math.min(elapsed, p.idleFromS ?? Infinity)) - (sent.get(p.id) ?? 0);
      for (let i = 0; i < due; i += 1) {
        const n = (sent.get(p.id) ?? 0) + i;
        messages.push({ key: `${p.id}-${n % 7}`, value: JSON.stringify({ producer: p.id, n }), headers: { 'producer-id': p.id } });
      }
      sent.set(p.id, (sent.get(p.id) ?? 0) + Math.max(0, due));
    }
    if (messages.length > 0) await producer.send({ topic, messages, acks: -1 });
  };
  const done = (async () => {
    try {
      while (!stopped && Date.now() - started < seconds * 1000) {
        await tick();
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    } finally {
      await producer.disconnect();
    }
  })();
  return { offered: (id) => sent.get(id) ?? 0, done, stop: () => void (stopped = true) };
};
