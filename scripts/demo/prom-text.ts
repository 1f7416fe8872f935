/** Reads counters out of Prometheus text format (the sidecar's /metrics). Pure. */
export type Samples = Map<string, number>;

/** `name{a="x",b="y"} 12` → key `name{a="x",b="y"}` (labels as printed). */
export const parsePromText = (text: string): Samples => {
  const samples: Samples = new Map();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const space = line.lastIndexOf(' ');
    const value = Number(line.slice(space + 1));
    if (Number.isFinite(value)) samples.set(line.slice(0, space), value);
  }
  return samples;
};

/** Sum of `name` samples whose labels include every given label. */
export const sumOf = (samples: Samples, name: string, labels: Record<string, string>): number => {
  let sum = 0;
  for (const [key, value] of samples) {
    if (!key.startsWith(`${name}{`) && key !== name) continue;
    if (Object.entries(labels).every(([k, v]) => key.includes(`${k}="${v}"`))) sum += value;
  }
  return sum;
};

/** Like sumOf, but undefined when no sample matches (a gauge not set, e.g. an idle producer's budget share). */
export const valueOf = (samples: Samples, name: string, labels: Record<string, string>): number | undefined => {
  const found = [...samples.keys()].some((key) => (key.startsWith(`${name}{`) || key === name) && Object.entries(labels).every(([k, v]) => key.includes(`${k}="${v}"`)));
  return found ? sumOf(samples, name, labels) : undefined;
};
