/**
 * A Sender whose downstream messages keep each producer's releases at least one emission
 * interval apart and in order (src/hold/release-lanes.ts), for release paths that hand
 * messages straight to the sender (the drainer). Sharing the ingress dispatcher's lanes keeps
 * both paths of one producer spaced together. Other topics pass straight through. A message
 * evicted from its lane (graceful stop) is sent at once: it was due already.
 */
import type { Message } from 'kafkajs';
import type { ReleaseLanes } from '../hold/release-lanes';
import type { Sender } from './batch-sender';
import { messageBytes } from './batch-split';

export interface PacedSenderOptions {
  sender: Sender;
  lanes: ReleaseLanes;
  downstream: string;
  /** Who sent a downstream message (the identity header or key it still carries). */
  producerOf(message: Message): string;
  /** The spacing the producer's rule asks (0: none). */
  spacingOf(producer: string): number;
}

export const createPacedSender = ({ sender, lanes, downstream, producerOf, spacingOf }: PacedSenderOptions): Sender => {
  const waiting = new Set<Promise<void>>();
  return {
    send(topic, message) {
      if (topic !== downstream) return sender.send(topic, message);
      const producer = producerOf(message);
      let started = false;
      const sent = new Promise<void>((resolve, reject) => {
        const go = (): void => {
          if (started) return;
          started = true;
          sender.send(topic, message).then(resolve, reject);
        };
        lanes.due(producer, spacingOf(producer), { bytes: messageBytes(message), send: go, evict: go });
      });
      if (!started) {
        const tracked: Promise<void> = sent.then(
          () => void waiting.delete(tracked),
          () => void waiting.delete(tracked),
        );
        waiting.add(tracked);
      }
      return sent;
    },
    async flush() {
      while (waiting.size > 0) await Promise.all([...waiting]);
      await sender.flush();
    },
    pending: () => waiting.size + sender.pending(),
    close: () => sender.close(),
  };
};
