/**
 * The downstream budget (`total:`), one per replica, all replicas agreeing through Redis
 * (docs/design.md "The downstream budget"). Every CADENCE_MS: this replica's demand reports go
 * to Redis and everyone's come back (budget-store.ts), the same water-filling gives each producer
 * its target (budget-targets.ts), and the ledgers (share-ledger.ts) turn targets into the shares
 * in force. On the hot path, ruleOf hands out each producer's own rule at its share
 * (effective-rule.ts; cached until the next cadence) and the decider tells the meter what was
 * decided (demand-meter.ts) — one store call per producer per fetch as before. Without `total:`
 * ruleOf is the own rule and nothing is recorded: one branch per call.
 */
import type { Logger } from 'pino';
import type { Clock } from '../clock';
import type { FetchDecider } from '../decide/fetch-decider';
import type { Candidate, RuleView, Verdict } from '../decide/fetch-decider';
import type { LimitRule } from '../limit/types';
import type { BudgetSpec, QuotaRules, ResolvedRule } from '../rules/types';
import { FOLLOW_MS, followSignal } from './aimd';
import type { Claimant } from './budget-targets';
import { mergeReports, targetsOf } from './budget-targets';
import type { BudgetStore, Exchange } from './budget-store';
import { MARGIN, PUMP_MS } from './budget-queue';
import { createDemandMeter, type DemandReport } from './demand-meter';
import { effectiveRule, HORIZON_MS } from './effective-rule';
import { maxLagMessages } from './follow-lag';
import { createShareLedger, type ShareLedger } from './share-ledger';

/** Reports are exchanged and shares computed this often. */
export const CADENCE_MS = 250;
/** An increase waits this long: the horizon plus a cadence (share-ledger.ts). */
export const DELAY_MS = HORIZON_MS + CADENCE_MS;
/** A replica that stops reporting loses its claim after this. */
export const REPORT_TTL_MS = 2000;
/** Newcomers may be granted up to this fraction above the budget (the bound's 1.05). */
export const RESERVE = 0.05;
/** Producers named in status and metrics, the largest shares first. */
export const TOP_SHARES = 20;

export interface BudgetStatus {
  rate: string;
  bytes?: string;
  /** The budget in force, messages per second (below `rate` while `follow` holds it back). */
  inForce: number;
  follow?: { group: string; maxLag: string; lag?: number; lagging?: boolean };
  replicas: number;
  /** The largest shares in force (messages per second) with each producer's demand. */
  shares: Array<{ producer: string; share: number; demand: number; backlogged: boolean }>;
  /** Set when the last exchange with Redis failed: the budget is divided locally. */
  localSince?: number;
}

export interface Budget {
  ruleOf(producer: string): RuleView;
  /** Wraps the decider so what it decides is metered (only while a budget is in force). */
  decider(inner: FetchDecider): FetchDecider;
  start(): void;
  stop(): void;
  status(): BudgetStatus | undefined;
  /** One cadence (tests call it directly). */
  tick(): Promise<void>;
}

export interface BudgetOptions {
  rules(): QuotaRules;
  resolve(rules: QuotaRules, producer: string): ResolvedRule;
  store: BudgetStore;
  /** The flow's clock (the store's time): verdict instants are on it. */
  clock: Clock;
  members(): number;
  /** Whether decisions are answered by the store-error fallback now (it divides by members itself). */
  fallbackActive(): boolean;
  /** The followed group's lag on the downstream topic (`total.follow`). */
  readLag?(group: string): Promise<number | undefined>;
  logger: Logger;
  onTick?(status: BudgetStatus): void;
  /**
   * Adds `messages` to what the budget gave `producer` (the usage history's `budgetShare`): every
   * cadence, each replica its part of the share in force (÷ the replicas reporting), in whole messages.
   */
  countShare?(producer: string, messages: number): void;
}

const claimantOf = (rule: ResolvedRule): Claimant | undefined => {
  if (rule.unlimited || rule.shadow || !rule.limit) return undefined;
  const { limit } = rule;
  return { rate: 1000 / limit.intervalMs, bytes: limit.byteIntervalMs === undefined ? Infinity : 1000 / limit.byteIntervalMs, weight: rule.weight ?? 1, min: rule.minRate ?? 0 };
};

/**
 * While the budget holds a producer below its own rule and its own rule has a queue longer than
 * the horizon, what the budget refuses waits in memory (budget-queue.ts) as long as its own queue
 * would have held it; its chunk is what the share admits in a horizon and a pump.
 */
const waitsOf = (own: LimitRule, effective: LimitRule): Pick<RuleView, 'waits'> => {
  const held = effective.intervalMs > own.intervalMs || (effective.byteIntervalMs ?? 0) > (own.byteIntervalMs ?? 0);
  if (!held || own.algorithm !== 'leaky-bucket' || own.capacityMs <= HORIZON_MS) return {};
  return { waits: { maxWaitMs: own.capacityMs, chunk: Math.ceil(((HORIZON_MS + PUMP_MS) / effective.intervalMs)) + MARGIN } };
};

/** A refusal says its producer has demand for this long after its decision (demand-meter.ts). */
export const REFUSED_MS = 3000;

/** What one fetch decided, per producer: counts, bytes and the latest slot or refusal. */
const meterFetch = (candidates: readonly Candidate[], verdicts: readonly Verdict[], now: number, record: (p: string, n: number, b: number, busy: number) => void): void => {
  let producer: string | undefined;
  let count = 0;
  let bytes = 0;
  let busy = 0;
  for (let i = 0; i < candidates.length; i += 1) {
    const c = candidates[i];
    if (c.rule.unlimited || !c.rule.limit || c.rule.shadow) continue;
    if (c.producer !== producer) {
      if (producer !== undefined) record(producer, count, bytes, busy);
      [producer, count, bytes, busy] = [c.producer, 0, 0, 0];
    }
    const v = verdicts[i];
    count += 1;
    bytes += c.size;
    busy = Math.max(busy, v.kind === 'forward' ? v.at : Math.min(v.notBefore, now + REFUSED_MS));
  }
  if (producer !== undefined) record(producer, count, bytes, busy);
};

export const createBudget = (options: BudgetOptions): Budget => {
  const { clock, logger } = options;
  const meter = createDemandMeter();
  let spec: BudgetSpec | undefined;
  let rates: ShareLedger = createShareLedger({ delayMs: DELAY_MS, reserve: RESERVE });
  let bytes: ShareLedger | undefined;
  const views = new Map<string, { own: ResolvedRule; view: RuleView }>();
  let lastStatus: BudgetStatus | undefined;
  /** The last lag read; `lagging`: the step it asks for (true shrink, false grow, undefined hold: aimd.ts). */
  let lag: { value: number; lagging?: boolean; at: number; told: boolean } | undefined;
  let lagReading = false;
  let localSince: number | undefined;
  let timer: NodeJS.Timeout | undefined;
  let ticking = false;
  /** What each producer's share allowed since the last whole message counted (usage history). */
  const owed = new Map<string, number>();
  let countedAt: number | undefined;

  const countShares = (now: number, replicas: number): void => {
    if (!options.countShare) return;
    const since = countedAt === undefined ? CADENCE_MS : Math.min(now - countedAt, 4 * CADENCE_MS);
    countedAt = now;
    for (const producer of owed.keys()) if (!rates.inForce().has(producer)) owed.delete(producer);
    for (const [producer, share] of rates.inForce()) {
      const due = (owed.get(producer) ?? 0) + (share * Math.max(0, since)) / 1000 / Math.max(1, replicas);
      const whole = Math.floor(due);
      if (whole > 0) options.countShare(producer, whole);
      owed.set(producer, due - whole);
    }
  };

  const readLagSometimes = (follow: NonNullable<BudgetSpec['follow']>, rate: number): void => {
    if (!options.readLag || lagReading || (lag && clock.now() - lag.at < FOLLOW_MS)) return;
    lagReading = true;
    options.readLag(follow.group).then(
      (value) => {
        if (value === undefined) logger.debug({ group: follow.group }, 'budget: the followed group has committed nothing on the downstream topic; no step');
        else lag = { value, lagging: followSignal(value, lag?.value, maxLagMessages(follow.maxLag, rate)), at: clock.now(), told: false };
      },
      (error: unknown) => logger.debug({ err: error, group: follow.group }, 'budget: the followed group\'s lag was not read this time'),
    ).finally(() => (lagReading = false));
  };

  const exchange = async (total: BudgetSpec, reports: DemandReport[]): Promise<Exchange> => {
    const lagging = lag && !lag.told ? lag.lagging : undefined;
    try {
      const reply = await options.store.exchange({ reports, lagging, follow: total.follow ? { rate: total.rate } : undefined });
      if (lag) lag.told = true;
      if (localSince !== undefined) logger.info('budget: Redis answers again; shares agreed across replicas');
      localSince = undefined;
      return reply;
    } catch (error) {
      if (localSince === undefined) {
        localSince = clock.now();
        logger.warn({ err: error }, 'budget: reports not exchanged; dividing the budget between the group\'s members from this replica\'s demand');
      }
      const members = options.fallbackActive() ? 1 : Math.max(1, options.members());
      const followed = lastStatus && lastStatus.inForce < total.rate ? lastStatus.inForce : total.rate;
      return { now: clock.now(), replicas: [reports], followed: followed / members };
    }
  };

  const tick = async (): Promise<void> => {
    const rules = options.rules();
    const total = rules.total;
    if (total !== spec) {
      if (!total || !spec || total.bytes === undefined !== (spec.bytes === undefined)) {
        rates = createShareLedger({ delayMs: DELAY_MS, reserve: RESERVE });
        bytes = total?.bytes === undefined ? undefined : createShareLedger({ delayMs: DELAY_MS, reserve: RESERVE });
      }
      spec = total;
      views.clear();
    }
    if (!total) {
      lastStatus = undefined;
      countedAt = undefined;
      return;
    }
    if (total.follow) readLagSometimes(total.follow, total.rate);
    const now = clock.now();
    const reports = meter.take(now, 2 * CADENCE_MS);
    const reply = await exchange(total, reports);
    const inForce = reply.followed ?? total.rate;
    const merged = mergeReports(reply.replicas);
    const targets = targetsOf(
      { rate: inForce, ...(total.bytes === undefined ? {} : { bytes: (total.bytes * inForce) / total.rate }) },
      merged,
      (producer) => claimantOf(options.resolve(rules, producer)),
    );
    // Each replica grants newcomers at most its part of what is free: by the replicas reporting
    // (they all report every cadence), or the group's members when it knows of more.
    const members = localSince === undefined ? Math.max(options.members(), reply.replicas.length) : 1;
    rates.update(now, inForce, targets.rate, members);
    bytes?.update(now, (total.bytes ?? 0) * (inForce / total.rate), targets.bytes, members);
    views.clear();
    countShares(now, localSince === undefined ? reply.replicas.length : members);
    const shares = [...rates.inForce()].sort((a, b) => b[1] - a[1]).slice(0, TOP_SHARES);
    lastStatus = {
      rate: total.rateLabel,
      ...(total.bytesLabel ? { bytes: total.bytesLabel } : {}),
      inForce,
      ...(total.follow ? { follow: { group: total.follow.group, maxLag: total.follow.maxLagLabel, ...(lag ? { lag: lag.value, lagging: lag.value > maxLagMessages(total.follow.maxLag, total.rate) } : {}) } } : {}),
      replicas: reply.replicas.length,
      shares: shares.map(([producer, share]) => ({ producer, share, demand: targets.demand.get(producer) ?? 0, backlogged: merged.get(producer)?.backlogged ?? false })),
      ...(localSince === undefined ? {} : { localSince }),
    };
    options.onTick?.(lastStatus);
  };

  const ruleOf = (producer: string): RuleView => {
    const rules = options.rules();
    const own = options.resolve(rules, producer);
    if (spec === undefined || rules.total === undefined || own.unlimited || own.shadow || !own.limit) return own;
    const cached = views.get(producer);
    if (cached && cached.own === own) return cached.view;
    const now = clock.now();
    const share = { rate: rates.shareOf(producer, now), ...(bytes ? { bytes: bytes.shareOf(producer, now) } : {}) };
    const limit = effectiveRule(own.limit, share);
    const view: RuleView = { name: own.name, unlimited: false, shadow: false, limit, ...waitsOf(own.limit, limit) };
    views.set(producer, { own, view });
    return view;
  };

  return {
    ruleOf,
    decider: (inner) => ({
      async decide(candidates) {
        const verdicts = await inner.decide(candidates);
        if (spec !== undefined) meterFetch(candidates, verdicts, clock.now(), meter.record);
        return verdicts;
      },
    }),
    tick,
    start() {
      const loop = (): void => {
        timer = setTimeout(() => {
          if (ticking) return loop();
          ticking = true;
          tick().catch((error: unknown) => logger.warn({ err: error }, 'budget: a cadence failed')).finally(() => {
            ticking = false;
            if (timer !== undefined) loop();
          });
        }, CADENCE_MS);
        timer.unref();
      };
      void tick().catch((error: unknown) => logger.warn({ err: error }, 'budget: a cadence failed'));
      loop();
    },
    stop() {
      if (timer) clearTimeout(timer);
      timer = undefined;
    },
    status: () => lastStatus,
  };
};
