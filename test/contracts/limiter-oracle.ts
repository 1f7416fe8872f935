/**
 * A brute-force oracle of the limiter for property tests: written from the definitions in
 * docs/design.md, independently of src/limit/algorithms. It keeps the full history of admitted
 * decisions and counts windows by scanning it. One rule, arrival times never going back.
 */
import type { Decision, LimitRule } from '../../src/limit/types';

interface Admission {
  decidedAt: number;
  release: number;
  size: number;
}

const SLOTS = 10;

export const createOracle = (rule: LimitRule) => {
  const admitted: Admission[] = [];
  let tat = 0;
  let btat = 0;
  let tail = 0;

  /** The instant each window admits again, or undefined; refusals carry [limit code, notBefore, spread]. */
  /** Decision instants at or after `cutoff`, oldest first (a backward scan keeps long runs fast). */
  const since = (cutoff: number): number[] => {
    let i = admitted.length;
    while (i > 0 && admitted[i - 1].decidedAt >= cutoff) i -= 1;
    return admitted.slice(i).map((a) => a.decidedAt);
  };

  const windowRefusals = (now: number): Array<[number, number, number]> => {
    const out: Array<[number, number, number]> = [];
    rule.windows.forEach((w, j) => {
      const recent = since(now - 2 * w.windowMs); // nothing older can count in any kind of window
      let counted: number[];
      let reopen: (t: number) => number;
      if (w.kind === 'log') {
        counted = recent.filter((t) => t > now - w.windowMs);
        reopen = (t) => t + w.windowMs;
      } else if (w.kind === 'fixed') {
        counted = recent.filter((t) => Math.floor(t / w.windowMs) === Math.floor(now / w.windowMs));
        reopen = () => (Math.floor(now / w.windowMs) + 1) * w.windowMs;
      } else {
        const g = w.windowMs / SLOTS;
        counted = recent.filter((t) => Math.floor(t / g) >= Math.floor(now / g) - SLOTS);
        reopen = (t) => (Math.floor(t / g) + SLOTS + 1) * g;
      }
      if (counted.length >= w.max) out.push([3 + j, reopen(counted[counted.length - w.max]), w.windowMs / w.max]);
    });
    return out;
  };

  const bucketRefusals = (now: number, size: number): { release: number; refusals: Array<[number, number, number]> } => {
    const cap = rule.capacityMs;
    const byteT = rule.byteIntervalMs;
    const refusals: Array<[number, number, number]> = [];
    if (rule.algorithm === 'leaky-bucket') {
      // A producer with refusals outstanding may take a slot left free in the last second.
      const from = tail > now ? now - 1000 : now;
      const release = Math.max(from, tat, byteT === undefined ? 0 : btat);
      if (release - now > cap) {
        const bytes = byteT !== undefined && btat > tat;
        refusals.push(bytes ? [2, release - cap, size * byteT] : [1, release - cap, rule.intervalMs]);
      }
      return { release, refusals };
    }
    if (tat - now > cap) refusals.push([1, tat - cap, rule.intervalMs]);
    if (byteT !== undefined && btat - now > cap) refusals.push([2, btat - cap, size * byteT]);
    return { release: now, refusals };
  };

  const decide = (now: number, sizes: number[]): Array<{ code: number; at: number; decision?: Decision }> => {
    const out: Array<{ code: number; at: number }> = [];
    let first: [number, number, number] | undefined;
    for (const size of sizes) {
      if (first === undefined) {
        const { release, refusals } = bucketRefusals(now, size);
        refusals.push(...windowRefusals(now));
        if (refusals.length === 0) {
          admitted.push({ decidedAt: now, release, size });
          const byteT = rule.byteIntervalMs;
          if (rule.algorithm === 'leaky-bucket') {
            tat = release + rule.intervalMs;
            if (byteT !== undefined) btat = release + size * byteT;
          } else {
            tat = Math.max(tat, now) + rule.intervalMs;
            if (byteT !== undefined) btat = Math.max(btat, now) + size * byteT;
          }
          out.push({ code: 0, at: Math.ceil(release) });
          continue;
        }
        first = refusals.reduce((best, r) => (r[1] > best[1] ? r : best));
      }
      // The tail spreads a refusal at most an hour past its own instant (TAIL_HORIZON_MS).
      const notBefore = Math.max(first[1], Math.min(tail, first[1] + 3_600_000));
      tail = notBefore + (first[0] === 2 ? size * (rule.byteIntervalMs as number) : first[2]);
      out.push({ code: first[0], at: Math.ceil(notBefore) });
    }
    return out;
  };

  return { decide, admitted: () => admitted };
};
