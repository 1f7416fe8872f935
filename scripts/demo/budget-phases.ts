/**
 * The downstream budget's two phases in the demo (pure): each is measured over its last part,
 * once the shares have settled — per producer the mean share and demand in force (sampled once
 * a second from /metrics) and offered/s and forwarded/s from the counters — then a table per
 * phase and a verdict computed from both.
 */
import { align, perS, type ProducerRow } from './demo-table';

export interface Phase {
  name: string;
  fromS: number;
  toS: number;
}

/** What a phase measured of a producer: the live table's columns without the backlog ones. */
type Measured = Pick<ProducerRow, 'id' | 'quota' | 'weight' | 'share' | 'demand' | 'offeredPerS' | 'forwardedPerS'>;

export interface PhaseResult {
  phase: Phase;
  /** The measured part: from the first sample SETTLE_S into the phase to the last. */
  fromS: number;
  toS: number;
  inForce?: number;
  producers: Measured[];
}

/** A share that goes up applies 500 ms later, an idle producer's is freed within ~1 s, a held backlog drains: skip the phase's start. */
export const SETTLE_S = 5;

const mean = (xs: readonly (number | undefined)[]): number | undefined => {
  const present = xs.filter((x): x is number => x !== undefined);
  // A producer without a share in some samples (idle, or between cadences) had none then: 0.
  return present.length === 0 ? undefined : present.reduce((a, b) => a + b, 0) / xs.length;
};

export const createPhaseMeter = (phases: readonly Phase[]) => {
  let current = 0;
  let samples: Array<{ atS: number; rows: readonly ProducerRow[]; inForce?: number }> = [];
  return {
    /** One sample (seconds since the load started); the phase's result when this sample ends it. */
    add(atS: number, rows: readonly ProducerRow[], inForce: number | undefined): PhaseResult | undefined {
      const phase = phases[current];
      if (!phase) return undefined;
      if (atS >= phase.fromS + SETTLE_S) samples.push({ atS, rows, inForce });
      if (atS < phase.toS) return undefined;
      current += 1;
      const [first, last] = [samples[0], samples[samples.length - 1]];
      const taken = samples;
      samples = [];
      if (!first || last.atS <= first.atS) return undefined;
      const seconds = last.atS - first.atS;
      return {
        phase,
        fromS: first.atS,
        toS: last.atS,
        inForce: mean(taken.map((s) => s.inForce)),
        producers: last.rows.map((r, i) => ({
          id: r.id,
          quota: r.quota,
          weight: r.weight,
          share: mean(taken.map((s) => s.rows[i].share)),
          demand: mean(taken.map((s) => s.rows[i].demand)),
          offeredPerS: (r.offered - first.rows[i].offered) / seconds,
          forwardedPerS: (r.forwarded - first.rows[i].forwarded) / seconds,
        })),
      };
    },
  };
};

const sum = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0);

export const phaseTable = (result: PhaseResult, totalLabel: string): string[] => [
  `the budget, ${result.phase.name} (means over ${result.fromS.toFixed(0)}–${result.toS.toFixed(0)} s): in force ${perS(result.inForce)} (total: ${totalLabel}), ` +
    `shares add up to ${perS(sum(result.producers.map((p) => p.share ?? 0)))}, forwarded together ${perS(sum(result.producers.map((p) => p.forwardedPerS)))}`,
  ...align([
    ['producer', 'own rule', 'weight', 'share', 'demand', 'offered/s', 'forwarded/s'],
    ...result.producers.map((p) => [p.id, p.quota, String(p.weight), perS(p.share), perS(p.demand), perS(p.offeredPerS), perS(p.forwardedPerS)]),
  ]).map((line) => `  ${line}`),
];

const arrow = (a: number | undefined, b: number | undefined): string => `${perS(a).replace('/s', '')}→${perS(b)}`;

/** What moved between the two phases, from the measurements: the weights' effect before, the freed share after. */
export const verdict = (results: readonly PhaseResult[], idle: readonly string[]): string[] => {
  const [before, after] = results;
  if (!before || !after) return ['verdict: the budget\'s two phases were not both measured (stopped early?)'];
  const byId = (r: PhaseResult, id: string): Measured | undefined => r.producers.find((p) => p.id === id);
  const lines: string[] = [];
  // Held back: forwarded measurably less than it offered (one that is not has its demand as its share, which follows what it offers).
  const held = (p: Measured): boolean => p.offeredPerS > p.forwardedPerS + 0.5;
  // Weights: the heaviest producer against the held-back weight-1 producer with the largest share (at the water level).
  const heavy = [...before.producers].filter((p) => p.weight > 1 && p.share !== undefined).sort((a, b) => b.weight - a.weight)[0];
  const light = before.producers
    .filter((p) => p.weight === 1 && p.share !== undefined && held(p))
    .sort((a, b) => (b.share ?? 0) - (a.share ?? 0))[0];
  if (heavy?.share !== undefined && light?.share !== undefined && light.share > 0) {
    lines.push(`weights (${before.phase.name}): ${heavy.id} (weight ${heavy.weight}) was given ${perS(heavy.share)}, ${light.id} (weight 1) ${perS(light.share)}: ×${(heavy.share / light.share).toFixed(1)}` +
      ` (forwarded ${perS(heavy.forwardedPerS)} and ${perS(light.forwardedPerS)})`);
  }
  const freed = sum(idle.map((id) => byId(before, id)?.share ?? 0));
  const others = after.producers.filter((p) => !idle.includes(p.id));
  // Only those the budget held before: the freed share is what lets them grow.
  const grown = others.filter((p) => {
    const was = byId(before, p.id);
    return was !== undefined && held(was) && (p.share ?? 0) - (was.share ?? 0) >= Math.max(1, 0.1 * (was.share ?? 0));
  });
  const moves = (list: readonly Measured[], what: (m: Measured | undefined) => number | undefined): string =>
    list.map((p) => `${p.id} ${arrow(what(byId(before, p.id)), what(p))}`).join(', ');
  const went = `${idle.join(', ')} went idle at ${after.phase.fromS} s (its share ${perS(freed)} before)`;
  lines.push(grown.length > 0
    ? `verdict: shares moved after ${went}: ${moves(grown, (m) => m?.share)}; forwarded ${moves(grown, (m) => m?.forwardedPerS)}`
    : `verdict: shares did not move after ${went}: ${moves(others, (m) => m?.share)}`);
  return lines;
};
