/**
 * Takes messages into the flow: routes each from where it stands (src/flow/route.ts), decides
 * those that need it in one decider call (one store call per producer), and hands every action
 * to the dispatcher with the ack its offset needs. A stall (the store down under
 * limiter.onStoreError = park, on a tier) stops there: the rest is not taken and its
 * partition waits.
 */
import type { BudgetQueue } from '../budget/budget-queue';
import type { Clock } from '../clock';
import type { Candidate, FetchDecider, RuleView, Verdict } from '../decide/fetch-decider';
import type { Acks, DispatchEntry, Dispatcher } from './dispatch';
import type { FlowItem } from './flow-item';
import { type Action, afterVerdict, firstStep, type RoutePolicy } from './route';

export interface TakeDeps {
  decider: FetchDecider;
  ruleOf(producer: string): RuleView;
  policy: RoutePolicy;
  clock: Clock;
  /** Where messages wait for a contended budget (only with `total:`). */
  budgetQueue?: BudgetQueue;
}

export interface Taken {
  /** How many of the items were dispatched (all, unless a stall stopped them). */
  count: number;
  /** Set on a stall: retry the rest after this instant. */
  stallUntil?: number;
}

/** Each item's first step, and a candidate for each that is to be decided (in order). */
const firstSteps = (deps: TakeDeps, items: readonly FlowItem[]): { steps: Action[]; asked: Candidate[]; rules: RuleView[] } => {
  const now = deps.clock.now();
  const steps: Action[] = [];
  const asked: Candidate[] = [];
  const rules: RuleView[] = [];
  const queue = deps.budgetQueue;
  for (const item of items) {
    const rule = deps.ruleOf(item.info.producer);
    let step = firstStep(item, now, deps.policy, rule);
    // Its producer has messages waiting for the budget: it waits behind them, undecided.
    if (step.kind === 'decide' && rule.waits && queue?.joins(item.info.producer, item, item.size)) {
      step = { kind: 'wait-budget', maxWaitMs: rule.waits.maxWaitMs, chunk: rule.waits.chunk, otherwise: { kind: 'wait', until: now } };
    }
    steps.push(step);
    if (step.kind === 'decide') {
      asked.push({ producer: item.info.producer, rule, size: item.size, asOf: step.asOf });
      rules.push(rule);
    }
  }
  return { steps, asked, rules };
};

/** Each item's action (after its verdict), tracked and handed to the dispatcher, up to a stall. */
const dispatchInOrder = (deps: TakeDeps, dispatcher: Dispatcher, items: readonly FlowItem[], steps: readonly Action[], verdicts: readonly Verdict[], rules: readonly RuleView[], acks: Acks): Taken => {
  const decidedAt = deps.clock.now();
  let v = 0;
  const entries: DispatchEntry[] = [];
  let taken: Taken = { count: items.length };
  try {
    for (let i = 0; i < items.length; i += 1) {
      const item = items[i];
      const step = steps[i];
      const action = step.kind === 'decide' ? afterVerdict(item, verdicts[v], decidedAt, deps.policy, rules[v++].waits) : step;
      if (action.kind === 'stall') {
        taken = { count: i, stallUntil: action.until };
        break;
      }
      if (action.kind === 'decide') throw new Error('the router asked for a second decision');
      acks.track(item);
      entries.push({ item, action });
    }
  } finally {
    dispatcher.dispatchAll(entries, acks); // what was tracked is dispatched, even if a later item threw
  }
  return taken;
};

/** The first steps, the one decider call, then the hand-over. */
export const takeItems = async (deps: TakeDeps, dispatcher: Dispatcher, items: readonly FlowItem[], acks: Acks): Promise<Taken> => {
  const { steps, asked, rules } = firstSteps(deps, items);
  const verdicts = asked.length > 0 ? await deps.decider.decide(asked) : [];
  return dispatchInOrder(deps, dispatcher, items, steps, verdicts, rules, acks);
};
