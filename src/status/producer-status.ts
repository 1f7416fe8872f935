/**
 * `sluice status`: what the store says about producers, as text (pure formatting here).
 * One producer: its rule, rate, backlog (time and about how many messages) and next free
 * slot. Without a producer: the rules in force, and the state of every producer the quota
 * file names exactly — the store is not scanned (SCAN over a shared Redis or a whole Redis
 * Cluster is not cheap); /v1/producers/{id} of a running replica adds its own counts.
 */
import type { RuleView } from '../decide/fetch-decider';
import type { ProducerState } from '../limit/types';

export interface ProducerLine {
  producer: string;
  rule: RuleView;
  /** Undefined for unlimited producers (never in the store). */
  state?: ProducerState;
  /** The store did not answer: why. */
  error?: string;
}

const iso = (ms: number): string => new Date(ms).toISOString();

export const backlogText = (rule: RuleView, state: ProducerState | undefined): string => {
  if (!state || !rule.limit) return '-';
  if (state.backlogMs <= 0) return 'none';
  const messages = Math.round(state.backlogMs / rule.limit.intervalMs);
  return `${state.backlogMs} ms (~${messages} msgs)`;
};

export const nextSlotText = (state: ProducerState | undefined): string => {
  if (!state) return '-';
  return state.nextFreeAt === undefined || state.backlogMs <= 0 ? 'now (idle)' : `${iso(state.nextFreeAt)} (in ${state.backlogMs} ms)`;
};

export const statusRow = (line: ProducerLine): string[] => [
  line.producer,
  line.rule.name,
  line.rule.unlimited ? 'unlimited' : (line.rule.limit?.labels.rate ?? '-'),
  line.error ? `store error: ${line.error}` : backlogText(line.rule, line.state),
  line.error ? '-' : line.rule.unlimited ? 'always' : nextSlotText(line.state),
];

export const STATUS_HEADER = ['PRODUCER', 'RULE', 'RATE', 'BACKLOG', 'NEXT FREE SLOT'];

/** One producer, as labelled lines. */
export const formatProducer = (line: ProducerLine): string => {
  const [producer, rule, rate, backlog, next] = statusRow(line);
  const flags = [line.rule.shadow ? 'shadow' : ''].filter(Boolean);
  return [
    `producer:       ${producer}`,
    `rule:           ${rule}${flags.length ? ` (${flags.join(', ')})` : ''}`,
    `rate:           ${rate}`,
    `backlog:        ${backlog}`,
    `next free slot: ${next}`,
    ...(line.state ? [`store time:     ${iso(line.state.now)}`] : []),
  ].join('\n') + '\n';
};
