/**
 * What a replica answers on its HTTP port (127.0.0.1): /healthz, /v1/status, /metrics, and the
 * few Prometheus numbers the scenarios judge by.
 */

const url = (port: number, path: string): string => `http://127.0.0.1:${port}${path}`;

/** The /healthz status code, or 0 when nothing answered within `timeoutMs`. */
export const healthz = async (port: number, timeoutMs = 3000): Promise<number> => {
  try {
    const res = await fetch(url(port, '/healthz'), { signal: AbortSignal.timeout(timeoutMs) });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return 0;
  }
};

export interface SendError {
  destination: string;
  failingSinceMs: number;
  failures: number;
  code: string;
  error?: string;
}

export interface GroupAnswer {
  groupId: string;
  joined: boolean;
  crashed: boolean;
  assigned?: Array<{ topic: string; partitions: number[] }>;
}

export interface StatusAnswer {
  groups?: GroupAnswer[];
  store?: { healthy: boolean };
  fallbackActive?: boolean;
  sendErrors?: SendError[];
  held?: { messages: number; bytes: number };
}

export const v1Status = async (port: number, timeoutMs = 3000): Promise<StatusAnswer | undefined> => {
  try {
    const res = await fetch(url(port, '/v1/status'), { signal: AbortSignal.timeout(timeoutMs) });
    return res.ok ? ((await res.json()) as StatusAnswer) : undefined;
  } catch {
    return undefined;
  }
};

export const metricsText = async (port: number, timeoutMs = 5000): Promise<string> => {
  const res = await fetch(url(port, '/metrics'), { signal: AbortSignal.timeout(timeoutMs) });
  if (!res.ok) throw new Error(`/metrics on port ${port} answered ${res.status}`);
  return res.text();
};

/** The sample lines of metric `name` (label sets included), comments left out. */
export const samples = (text: string, name: string): string[] =>
  text.split('\n').filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `));

/** Sum of every sample of `name` whose labels contain `labelFilter` (e.g. `outcome="forwarded"`). */
export const metricSum = (text: string, name: string, labelFilter = ''): number =>
  samples(text, name).filter((l) => l.includes(labelFilter)).reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);

/** Distinct values of label `label` among the samples of `name`. */
export const labelValues = (text: string, name: string, label: string): Set<string> => {
  const values = new Set<string>();
  const pattern = new RegExp(`${label}="((?:[^"\\\\]|\\\\.)*)"`);
  for (const line of samples(text, name)) {
    const m = pattern.exec(line);
    if (m) values.add(m[1] as string);
  }
  return values;
};
