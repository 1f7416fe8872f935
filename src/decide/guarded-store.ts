/**
 * The store-error policy (limiter.onStoreError) around the shared store. Every call goes to
 * the store first; a call that fails (timeout, connection: never retried, it may have run)
 * is answered by the policy instead:
 *   local   — an in-memory store enforces the rule scaled to 1/members of the ingress group;
 *   park    — every message refused `store-unavailable`, notBefore = now + parkDelayMs;
 *   forward — every message admitted now (fail open).
 * The fallback counts as active after `activateAfter` consecutive failures and ends at the
 * first success (reported through metrics.fallbackActive).
 */
import type { Logger } from 'pino';
import type { Clock } from '../clock';
import type { BatchDecision, DecideRequest, LimiterStore } from '../limit/types';
import type { LimitRule } from '../limit/types';
import type { Metrics } from '../metrics/types';

export type StoreErrorPolicy = 'local' | 'park' | 'forward';

/**
 * A reply; `fallback` when the store-error policy answered (its instants are the flow's clock,
 * not the store's); `unpaced` when the `forward` policy admitted everything at once (fail
 * open: no spacing either).
 */
export type GuardedDecision = BatchDecision & { unpaced?: boolean; fallback?: boolean };

export interface GuardedStore {
  decide(request: DecideRequest): Promise<GuardedDecision>;
  fallbackActive(): boolean;
  /** Consecutive failed calls so far (0 when the last call succeeded). */
  failures(): number;
}

export interface GuardedStoreOptions {
  store: LimiterStore;
  /** In-memory store used by `local`. */
  local: LimiterStore;
  policy: StoreErrorPolicy;
  /** Current members of the ingress group (≥ 1). */
  members: () => number;
  scaleRule: (rule: LimitRule, share: number) => LimitRule;
  clock: Clock;
  metrics: Metrics;
  logger: Logger;
  parkDelayMs: number;
  activateAfter?: number;
}

export const createGuardedStore = (options: GuardedStoreOptions): GuardedStore => {
  const { store, policy, clock, metrics, logger, activateAfter = 3 } = options;
  let failures = 0;
  let active = false;

  const setActive = (value: boolean): void => {
    if (value === active) return;
    active = value;
    metrics.fallbackActive(value);
    if (value) logger.warn({ policy, failures }, 'limiter store unavailable: store-error fallback active');
    else logger.info('limiter store answers again: store-error fallback ended');
  };

  const fallback = async (request: DecideRequest): Promise<GuardedDecision> => {
    const now = clock.now();
    if (policy === 'forward') {
      return Promise.resolve({ now, unpaced: true, fallback: true, decisions: request.sizes.map(() => ({ admitted: true, at: now })) });
    }
    if (policy === 'park') {
      const at = now + options.parkDelayMs;
      return Promise.resolve({ now, fallback: true, decisions: request.sizes.map(() => ({ admitted: false, at, reason: 'store-unavailable' })) });
    }
    const share = 1 / Math.max(1, options.members());
    return { ...(await options.local.decide({ ...request, rule: options.scaleRule(request.rule, share) })), fallback: true };
  };

  return {
    async decide(request) {
      try {
        const reply = await store.decide(request);
        failures = 0;
        setActive(false);
        return reply;
      } catch (error) {
        failures += 1;
        metrics.storeError();
        if (failures === 1) logger.warn({ err: error, policy }, 'limiter store call failed; applying limiter.onStoreError');
        if (failures >= activateAfter) setActive(true);
        return fallback(request);
      }
    },
    fallbackActive: () => active,
    failures: () => failures,
  };
};
