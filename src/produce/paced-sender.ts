/**
 * A Sender whose downstream messages keep each producer's releases at least one emission
 * interval apart (src/hold/release-pacer.ts), for release paths that hand messages straight
 * to the sender (the drainer). Sharing the ingress dispatcher's pacer keeps the two paths of
 * one producer spaced together. Other topics pass straight through.
 */
import type { Message } from 'kafkajs';
import type { Clock } from '../clock';
import type { ReleasePacer } from '../hold/release-pacer';
import type { Sender } from './batch-sender';

export interface PacedSenderOptions {
  sender: Sender;
  pacer: ReleasePacer;
  clock: Clock;
  downstream: string;
  /** Who sent a downstream message (the identity header or key it still carries). */
  producerOf(message: Message): string;
  /** The spacing the producer's rule asks (0: none). */
  spacingOf(producer: string): number;
}

export const createPacedSender = ({ sender, pacer, clock, downstream, producerOf, spacingOf }: PacedSenderOptions): Sender => {
  const waiting = new Set<Promise<void>>();
  return {
    send(topic, message) {
      if (topic !== downstream) return sender.send(topic, message);
      const producer = producerOf(message);
      const now = clock.now();
      const slot = pacer.slot(producer, spacingOf(producer), now);
      if (slot <= now) return sender.send(topic, message);
      const timed = new Promise<void>((resolve) => setTimeout(resolve, slot - now));
      waiting.add(timed);
      return timed.then(() => {
        waiting.delete(timed);
        return sender.send(topic, message);
      });
    },
    async flush() {
      while (waiting.size > 0) await Promise.all([...waiting]);
      await sender.flush();
    },
    pending: () => waiting.size + sender.pending(),
    close: () => sender.close(),
  };
};
