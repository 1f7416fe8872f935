/**
 * The budget in /metrics: `sluice_budget_rate` (the budget in force, messages/s; below the
 * configured rate while `follow` holds it back), `sluice_budget_share{producer}` and
 * `sluice_budget_demand{producer}` for the TOP_SHARES largest shares (bounded labels; set anew
 * every cadence), `sluice_budget_lag` (the followed group's lag, messages). Nothing is set
 * without `total:`.
 */
import { Gauge, type Registry } from 'prom-client';
import type { BudgetStatus } from './budget';

export const createBudgetMetrics = (registry: Registry): ((status: BudgetStatus) => void) => {
  const registers = [registry];
  const rate = new Gauge({ name: 'sluice_budget_rate', help: 'The downstream budget in force (total:), messages per second.', registers });
  const share = new Gauge({ name: 'sluice_budget_share', help: 'Share of the downstream budget in force, messages per second (the largest shares).', labelNames: ['producer'], registers });
  const demand = new Gauge({ name: 'sluice_budget_demand', help: 'Demand on the downstream budget, messages per second (the producers with the largest shares).', labelNames: ['producer'], registers });
  const lag = new Gauge({ name: 'sluice_budget_lag', help: 'Lag of the followed consumer group on the downstream topic (total.follow), messages.', registers });
  return (status) => {
    rate.set(status.inForce);
    share.reset();
    demand.reset();
    for (const s of status.shares) {
      share.set({ producer: s.producer }, s.share);
      demand.set({ producer: s.producer }, s.demand);
    }
    if (status.follow?.lag !== undefined) lag.set(status.follow.lag);
  };
};
