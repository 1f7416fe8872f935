/**
 * Answers kept for a short time per key (/v1/producers/{id}: one second), so hammering one
 * producer's endpoint runs its store script at most once a second. Concurrent requests share
 * the read in flight; a failed read is not kept. Bounded by lru-cache: past maxEntries the
 * least recently used go. Freshness is read on the injected clock, not lru-cache's own timer.
 */
import { LRUCache } from 'lru-cache';
import type { Clock } from '../clock';

export interface AnswerCacheOptions {
  ttlMs: number;
  maxEntries: number;
  clock: Clock;
}

export const createAnswerCache = <T>(load: (key: string) => Promise<T>, { ttlMs, maxEntries, clock }: AnswerCacheOptions) => {
  const entries = new LRUCache<string, { at: number; answer: Promise<T> }>({ max: maxEntries });
  return (key: string): Promise<T> => {
    const now = clock.now();
    const kept = entries.get(key);
    if (kept && now - kept.at < ttlMs) return kept.answer;
    const answer = load(key);
    entries.set(key, { at: now, answer });
    answer.catch(() => {
      if (entries.peek(key)?.answer === answer) entries.delete(key);
    });
    return answer;
  };
};
