/**
 * Compiles one rule of the quota file into the plain numbers of a LimitRule. Errors carry a
 * path relative to the rule (['limits', 1, 'per']) so the quota-file loader can report the
 * file line. Defaults: algorithm leaky-bucket; queue DEFAULT_QUEUE (1m) for a leaky bucket;
 * burst 1 for a token bucket; windows sliding.
 */
import { RateSyntaxError, parseByteRate, parseQueue, parseRate, parseWindow } from './rate-syntax';
import { fingerprintOf } from './fingerprint';
import type { Algorithm, LimitRule, WindowLimit, WindowKind } from './types';

export interface RuleSpec {
  algorithm?: 'leaky-bucket' | 'token-bucket';
  rate: string;
  queue?: string | number;
  burst?: number;
  bytes?: string;
  limits?: Array<string | { max: number; per: string; window?: WindowKind }>;
}

export interface RuleError {
  path: Array<string | number>;
  message: string;
}

export type CompileResult = { ok: true; rule: LimitRule } | { ok: false; errors: RuleError[] };

/** The queue of a leaky bucket whose spec sets none: a producer may fall one minute behind. */
export const DEFAULT_QUEUE = '1m';

const algorithms: Algorithm[] = ['leaky-bucket', 'token-bucket'];

const attempt = <T>(errors: RuleError[], path: Array<string | number>, parse: () => T): T | undefined => {
  try {
    return parse();
  } catch (error) {
    if (!(error instanceof RateSyntaxError)) throw error;
    errors.push({ path: [...path, ...error.subPath], message: error.message });
    return undefined;
  }
};

const compileCapacity = (spec: RuleSpec, algorithm: Algorithm, intervalMs: number, errors: RuleError[]) => {
  if (algorithm === 'token-bucket') {
    if (spec.queue !== undefined) {
      errors.push({ path: ['queue'], message: 'queue: a token bucket never delays, so it has no queue; use burst (or algorithm: leaky-bucket)' });
    }
    const burst = spec.burst ?? 1;
    if (!Number.isInteger(burst) || burst < 1) {
      errors.push({ path: ['burst'], message: `burst: expected a whole number of at least 1, got ${JSON.stringify(spec.burst)}` });
      return undefined;
    }
    return { burst, capacityMs: (burst - 1) * intervalMs };
  }
  if (spec.burst !== undefined) {
    errors.push({ path: ['burst'], message: 'burst: a leaky bucket has no burst, it spaces messages; use queue (or algorithm: token-bucket)' });
  }
  const queue = attempt(errors, ['queue'], () => parseQueue(spec.queue ?? DEFAULT_QUEUE, 'queue'));
  if (queue === undefined) return undefined;
  return { burst: 1, capacityMs: queue.kind === 'duration' ? queue.ms : queue.messages * intervalMs };
};

const compileWindows = (spec: RuleSpec, errors: RuleError[]): WindowLimit[] => {
  if (spec.limits === undefined) return [];
  if (!Array.isArray(spec.limits)) {
    errors.push({ path: ['limits'], message: 'limits: expected a list of windows such as ["1000/h", { max: 20000, per: 1d, window: fixed }]' });
    return [];
  }
  const windows: WindowLimit[] = [];
  spec.limits.forEach((limit, index) => {
    const window = attempt(errors, ['limits', index], () => parseWindow(limit, `limits[${index}]`));
    if (window !== undefined) windows.push(window);
  });
  return windows;
};

/** Compiles a rule spec; never throws on bad input, returns every error found instead. */
export const compileRule = (spec: RuleSpec): CompileResult => {
  const errors: RuleError[] = [];
  const algorithm = spec.algorithm ?? 'leaky-bucket';
  if (!algorithms.includes(algorithm)) {
    errors.push({ path: ['algorithm'], message: `algorithm: expected leaky-bucket or token-bucket, got ${JSON.stringify(spec.algorithm)}` });
  }
  const rate = spec.rate === undefined
    ? (errors.push({ path: ['rate'], message: 'rate: required, e.g. "20/s"' }), undefined)
    : attempt(errors, ['rate'], () => parseRate(spec.rate, 'rate'));
  const bytes = spec.bytes === undefined ? undefined : attempt(errors, ['bytes'], () => parseByteRate(spec.bytes, 'bytes'));
  const capacity = compileCapacity(spec, algorithm, rate?.intervalMs ?? 1, errors);
  const windows = compileWindows(spec, errors);
  if (errors.length > 0 || rate === undefined || capacity === undefined) return { ok: false, errors };
  const body = {
    algorithm,
    intervalMs: rate.intervalMs,
    capacityMs: capacity.capacityMs,
    burst: capacity.burst,
    ...(bytes === undefined ? {} : { byteIntervalMs: bytes.intervalMs }),
    windows,
    labels: { rate: spec.rate.trim(), ...(spec.bytes === undefined ? {} : { bytes: spec.bytes.trim() }) },
  };
  return { ok: true, rule: { ...body, fingerprint: fingerprintOf(body) } };
};
