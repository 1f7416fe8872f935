/**
 * What `npm run demo` runs: a few producers at different multiples of their quota in
 * config/demo-quotas.yaml, under a downstream budget (`total: 60/s`) below what their own rules
 * allow them together; checkout (weight 2) goes idle halfway, so its share is freed.
 */
export interface DemoProducer {
  id: string;
  /** Messages per second offered. */
  rate: number;
  /** Offers nothing from this second on (the load runs on for the others). */
  idleFromS?: number;
  /** Shown in the table: what the offered rate is, relative to the quota. */
  note: string;
}

export const DEMO = {
  loadSeconds: 30,
  /** After the load stops, how long the sidecar may keep releasing what waits. */
  settleSeconds: 15,
  /** checkout stops offering here: the budget's two phases, before and after. */
  idleAtS: 15,
  quotasFile: 'config/demo-quotas.yaml',
  tiers: '2s,10s',
  holdMaxMs: 2000,
  partitions: 3,
  /** Kafka, Redis, the sidecar and the load share a laptop: give Redis more than the 50 ms default. */
  redisTimeoutMs: '200',
};

export const DEMO_PRODUCERS: readonly DemoProducer[] = [
  { id: 'checkout', rate: 25, idleFromS: DEMO.idleAtS, note: `0.5x its 50/s quota, weight 2, idle from ${DEMO.idleAtS} s` },
  { id: 'billing', rate: 40, note: '2x its 20/s quota (queue 5s, then overflow)' },
  { id: 'batch-nightly', rate: 30, note: '3x its 10/s quota (queue 2s)' },
  { id: 'reports', rate: 30, note: '1x its 30/s rate, but a 600/m cap' },
  { id: 'mobile-app', rate: 5, note: '0.5x the default 10/s' },
];

/** The budget's phases; each is measured over its last part, once the shares have settled. */
export const DEMO_PHASES = [
  { name: 'phase 1, all five offer', fromS: 0, toS: DEMO.idleAtS },
  { name: 'phase 2, checkout idle', fromS: DEMO.idleAtS, toS: DEMO.loadSeconds },
] as const;
