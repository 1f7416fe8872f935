/**
 * Answers kept for a short time per key (/v1/producers/{id}: one second), so hammering one
 * producer's endpoint runs its store script at most once a second. Concurrent requests share
 * the read in flight; a failed read is not kept. Bounded: past maxEntries the oldest go.
 */
import type { Clock } from '../clock';

export interface AnswerCacheOptions {
  ttlMs: number;
  maxEntries: number;
  clock: Clock;
}

export const createAnswerCache = <T>(load: (key: string) => Promise<T>, { ttlMs, maxEntries, clock }: AnswerCacheOptions) => {
  // Map order is insertion order: the first entries are the oldest.
  const entries = new Map<string, { at: number; answer: Promise<T> }>();
  return (key: string): Promise<T> => {
    const now = clock.now();
    const kept = entries.get(key);
    if (kept && now - kept.at < ttlMs) return kept.answer;
    entries.delete(key);
    const answer = load(key);
    entries.set(key, { at: now, answer });
    answer.catch(() => {
      if (entries.get(key)?.answer === answer) entries.delete(key);
    });
    for (const oldest of entries.keys()) {
      if (entries.size <= maxEntries) break;
      entries.delete(oldest);
    }
    return answer;
  };
};
