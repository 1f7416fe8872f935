/** Small statistics over numbers: median, range, percentiles (nearest rank), mean. */
export interface Summary {
  median: number;
  min: number;
  max: number;
}

const sorted = (values: readonly number[]): number[] => [...values].sort((a, b) => a - b);

export const percentile = (values: readonly number[], p: number): number => {
  if (values.length === 0) return NaN;
  const s = sorted(values);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
};

export const median = (values: readonly number[]): number => {
  if (values.length === 0) return NaN;
  const s = sorted(values);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};

export const mean = (values: readonly number[]): number => (values.length === 0 ? NaN : values.reduce((a, b) => a + b, 0) / values.length);

export const summarize = (values: readonly number[]): Summary => ({
  median: median(values),
  min: Math.min(...values),
  max: Math.max(...values),
});

/** Pairs side A and side B run by run (same alternation) and summarizes f(a, b). */
export const pairwise = (a: readonly number[], b: readonly number[], f: (x: number, y: number) => number): Summary =>
  summarize(a.map((x, i) => f(x, b[i])));
