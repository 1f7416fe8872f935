/**
 * Carries out the drainer's steps for retry messages: hop, hold, forward, decide again
 * (one decider call for a whole batch: one store call per producer), park again or
 * dead-letter. Reuses the ingress pipeline's sender, hold scheduler and decider. Each
 * dispatched message yields a promise that settles once it was acknowledged wherever it
 * went, which is when its offset may be committed.
 */
import type { Logger } from 'pino';
import type { Clock } from '../clock';
import type { FetchDecider } from '../decide/fetch-decider';
import type { RuleView } from '../decide/verdict';
import type { HoldScheduler } from '../hold/hold-scheduler';
import type { Metrics } from '../metrics/types';
import type { DeadLetterReason, ParkInfo } from '../park/park-headers';
import { chooseTier, type Tier } from '../park/tiers';
import type { Sender } from '../produce/batch-sender';
import { deadLetter, forwardMessage, reparkMessage, type RetryItem } from './retry-item';
import { type DueStep, limitReached, type RetryPolicy, stepAfterVerdict, stepWhenTierDue } from './retry-steps';

export type DrainOutcome = 'forwarded' | 'reparked' | 'dead-lettered';

export interface RouterDeps {
  clock: Clock;
  sender: Sender;
  scheduler: HoldScheduler;
  decider: FetchDecider;
  ruleOf: (producer: string) => RuleView;
  partitionsOf: (topic: string) => number;
  policy: RetryPolicy;
  topics: { downstream: string; deadLetter: string };
  metrics: Metrics;
  logger: Logger;
  /** Called once per message when it reaches an outcome (sluice drain's summary). */
  report?: (producer: string, outcome: DrainOutcome) => void;
  /** false (sluice drain): a message not due yet is held in memory instead of hopping tiers. */
  hop?: boolean;
}

export interface Planned {
  item: RetryItem;
  step: DueStep;
}

export interface Dispatched {
  /** One per dispatched message, in order; settles once it was acknowledged. */
  settled: Promise<void>[];
  /** Set when the store failed under limiter.onStoreError = park: messages from this index on were not dispatched. */
  stall?: { index: number; until: number };
}

export interface RetryRouter {
  firstStep(item: RetryItem, now: number): DueStep;
  dispatch(planned: readonly Planned[]): Promise<Dispatched>;
}

export const createRetryRouter = (deps: RouterDeps): RetryRouter => {
  const { clock, sender, policy, metrics } = deps;

  const firstStep = (item: RetryItem, now: number): DueStep => {
    if (item.malformed || item.decideAgain) {
      const reason = limitReached(item.info, now, policy);
      return reason ? { kind: 'dead-letter', reason } : { kind: 'decide' };
    }
    const step = stepWhenTierDue(item.info, now, policy, deps.ruleOf(item.info.producer).limit?.intervalMs);
    return step.kind === 'hop' && deps.hop === false ? { kind: 'hold', until: item.info.notBefore } : step;
  };

  const outcome = (item: RetryItem, result: DrainOutcome): void => deps.report?.(item.info.producer, result);

  const toDeadLetter = (item: RetryItem, info: ParkInfo, reason: DeadLetterReason): Promise<void> => {
    const topic = deps.topics.deadLetter;
    return sender.send(topic, deadLetter(item, info, reason, deps.partitionsOf(topic), clock.now())).then(
      () => {
        metrics.message('dead_lettered', info.producer);
        outcome(item, 'dead-lettered');
      },
      (error) => {
        deps.logger.error({ err: error, origin: info.origin, reason }, 'a retry message cannot be written anywhere: its partition stops here');
        return new Promise<void>(() => undefined);
      },
    );
  };

  const forward = (item: RetryItem, attempt: number): Promise<void> => {
    const now = clock.now();
    return sender.send(deps.topics.downstream, forwardMessage(item, attempt, now)).then(
      () => {
        metrics.message('forwarded', item.info.producer);
        metrics.releaseDelay(now - item.info.firstSeen);
        outcome(item, 'forwarded');
      },
      () => toDeadLetter(item, item.info, 'too-large'),
    );
  };

  /** `moved`: a hop or a park-back at shutdown, which is no new outcome (not counted). */
  const park = (item: RetryItem, tier: Tier, info: ParkInfo, moved = false): Promise<void> =>
    sender.send(tier.topic, reparkMessage(item, info, deps.partitionsOf(tier.topic), clock.now())).then(
      () => {
        if (moved) return;
        metrics.message(info.reason.kind === 'delayed' ? 'delayed' : 'overflowed', info.producer);
        outcome(item, 'reparked');
      },
      () => toDeadLetter(item, info, 'too-large'),
    );

  /** Held in memory until `until`; evicted at shutdown, it is parked again with `parkInfo` (its slot kept). */
  const hold = (item: RetryItem, until: number, next: () => Promise<void>, parkInfo: ParkInfo = item.info): Promise<void> =>
    new Promise<void>((resolve) => {
      deps.scheduler.add({
        at: until,
        bytes: item.size,
        release: () => void next().then(resolve),
        evict: () => void park(item, chooseTier(policy.tiers, parkInfo.notBefore - clock.now()), parkInfo, true).then(resolve),
      });
    });

  /** After a hold: step again; a stall (store down under `park`) holds it again instead of burning an attempt. */
  const afterHold = async (item: RetryItem): Promise<void> => {
    const result = await dispatch([{ item, step: firstStep(item, clock.now()) }]);
    if (result.stall) return hold(item, Math.max(result.stall.until, clock.now() + 100), () => afterHold(item));
    await result.settled[0];
  };

  const carryOut = (item: RetryItem, step: DueStep): Promise<void> => {
    switch (step.kind) {
      case 'hop':
        return park(item, step.tier, item.info, true);
      case 'hold':
        return hold(item, step.until, () => afterHold(item));
      case 'forward':
        return forward(item, item.info.attempt);
      case 'dead-letter':
        return toDeadLetter(item, item.info, step.reason);
      case 'decide':
        throw new Error('decide steps are carried out by dispatch');
    }
  };

  const dispatch = async (planned: readonly Planned[]): Promise<Dispatched> => {
    const toDecide = planned.filter((p) => p.step.kind === 'decide');
    const verdicts = toDecide.length
      ? await deps.decider.decide(toDecide.map(({ item }) => ({ producer: item.info.producer, rule: deps.ruleOf(item.info.producer), size: item.size })))
      : [];
    const settled: Promise<void>[] = [];
    let v = 0;
    for (const [index, { item, step }] of planned.entries()) {
      if (step.kind !== 'decide') {
        settled.push(carryOut(item, step));
        continue;
      }
      const now = clock.now();
      const next = stepAfterVerdict(item.info, verdicts[v++], now, policy);
      if (next.kind === 'stall') return { settled, stall: { index, until: next.until } };
      if (next.kind === 'release') {
        const delayed: ParkInfo = { ...item.info, attempt: next.attempt, notBefore: next.at, reason: { kind: 'delayed' } };
        settled.push(hold(item, next.at, () => forward(item, next.attempt), delayed));
      }
      else if (next.kind === 'park') settled.push(park(item, next.tier, next.info));
      else settled.push(toDeadLetter(item, next.info, next.reason));
    }
    return { settled };
  };

  return { firstStep, dispatch };
};
