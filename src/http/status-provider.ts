/**
 * What the HTTP server asks the running program. The composition root (src/main.ts, src/app/)
 * implements it; tests pass a fake. Answers are plain JSON-able data; the server redacts
 * anything secret-looking again before it answers, but a provider should not put secrets in.
 */
import type { BudgetStatus } from '../budget/budget';

export interface GroupStatus {
  groupId: string;
  /** joined since start (the consumer has had at least one GROUP_JOIN). */
  joined: boolean;
  /** crashed and not restarted by kafkajs. */
  crashed: boolean;
  topics: string[];
  /** partitions this replica holds. */
  assigned?: Array<{ topic: string; partitions: number[] }>;
}

export interface StatusReport {
  mode: 'enforce' | 'shadow';
  store: { healthy: boolean; lastError?: string; lastErrorAt?: number };
  fallbackActive: boolean;
  onStoreError: 'local' | 'park' | 'forward';
  groups: GroupStatus[];
  held: { messages: number; bytes: number };
  /** Topics whose sends fail (retried; their messages wait, nothing is skipped). */
  sendErrors?: Array<{ destination: string; failingSinceMs: number; failures: number; code: string; error: string }>;
  /** The downstream budget in force (`total:`): its rate, the largest shares, the lag followed. */
  budget?: BudgetStatus;
}

export interface ProducerReport {
  id: string;
  /** the matching rule as written (pattern, or `default`) and its settings. */
  rule: { match: string } & Record<string, unknown>;
  /** outflow in messages per second of the message bucket (undefined when unlimited). */
  ratePerSecond?: number;
  /** how far behind the producer is, in ms (next free slot − now, at least 0). */
  backlogMs: number;
  /** epoch ms of the next free slot, or null when the bucket is empty. */
  nextFreeSlot: number | null;
  /** messages counted by this replica since start, by outcome. */
  counts: Record<string, number>;
}

export interface QuotasReport {
  file: string;
  /** epoch ms of the load of the rules in force. */
  loadedAt: number;
  /** the last refused reload, if the newest file did not validate. */
  lastError?: { at: number; message: string };
  default: Record<string, unknown>;
  producers: Array<{ match: string } & Record<string, unknown>>;
}

export interface StatusProvider {
  /** false once a consumer has crashed for good, or a topic has refused every send for kafka.stuckAfterMs: /healthz answers 503. */
  alive(): boolean;
  /** Why alive() is false (the 503's status), when the provider can say. */
  illness?(): string | undefined;
  /** true once every consumer has joined its group since start (SIGTERM is the server's). */
  ready(): boolean;
  status(): StatusReport | Promise<StatusReport>;
  /** undefined: no such producer is known (404). */
  producer(id: string): ProducerReport | undefined | Promise<ProducerReport | undefined>;
  quotas(): QuotasReport | Promise<QuotasReport>;
}
