/**
 * Reloads the quota file when it changes on disk. Watches the file's DIRECTORY, so it also
 * sees a Kubernetes ConfigMap update (the file is a symlink into `..data`, which is swapped
 * atomically) and editors that save by rename. Events are debounced and the content is
 * compared (sha256), so only a real change reloads; a slow poll catches missed events.
 * A bad new file keeps the last good rules: it is reported once through onError.
 */
import { watch, type FSWatcher } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { dirname } from 'node:path';
import { systemClock, type Clock } from '../clock';
import { SluiceError } from '../errors';
import { setRepeating, setTimer, type Timer } from '../timers';
import { parseQuotas } from './parse-quotas';
import type { QuotaRules } from './types';

export interface WatchQuotasOptions {
  file: string;
  /** A new, valid rule set (the caller swaps it in and records loadedAt). */
  onChange(rules: QuotaRules, loadedAt: number): void;
  /** A new file that cannot be read or is invalid; the last good rules stay in force. */
  onError(error: SluiceError): void;
  clock?: Clock;
  /** The rules in force now: the same content is not reported again. */
  current?: QuotaRules;
  debounceMs?: number;
  pollMs?: number;
}

export interface QuotaWatcher {
  close(): void;
}

const digestOf = (text: string): string => createHash('sha256').update(text).digest('hex');

export const watchQuotas = (options: WatchQuotasOptions): QuotaWatcher => {
  const { file, onChange, onError, clock = systemClock, debounceMs = 200, pollMs = 10_000 } = options;
  let lastDigest = options.current?.digest;
  let timer: Timer | undefined;
  let running = false;
  let again = false;
  let missingChecks = 0;
  let closed = false;

  const apply = (text: string): void => {
    const digest = digestOf(text);
    if (digest === lastDigest) return;
    lastDigest = digest;
    try {
      onChange(parseQuotas(text, file), clock.now());
    } catch (error) {
      onError(error instanceof SluiceError ? error : new SluiceError('QUOTA_INVALID', `${file}: ${(error as Error).message}`, { cause: error }));
    }
  };

  const unreadable = (error: NodeJS.ErrnoException): void => {
    missingChecks += 1;
    if (missingChecks === 1) return schedule(); // a rename in progress: look once more
    if (lastDigest === 'unreadable') return;
    lastDigest = 'unreadable';
    onError(new SluiceError('QUOTA_INVALID', `${file}: cannot read the quota file: ${error.code === 'ENOENT' ? 'no such file' : error.message}`, { cause: error }));
  };

  const check = async (): Promise<void> => {
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      const text = await readFile(file, 'utf8');
      missingChecks = 0;
      if (!closed) apply(text);
    } catch (error) {
      if (!closed) unreadable(error as NodeJS.ErrnoException);
    } finally {
      running = false;
      if (again && !closed) {
        again = false;
        schedule();
      }
    }
  };

  function schedule(): void {
    if (closed) return;
    timer?.clear();
    timer = setTimer(() => void check(), debounceMs).unref();
  }

  let watcher: FSWatcher | undefined;
  try {
    watcher = watch(dirname(file), { persistent: false }, () => schedule());
    watcher.on('error', () => undefined); // the poll below still runs
  } catch {
    watcher = undefined; // e.g. the directory does not exist yet: the poll finds the file later
  }
  const poll = setRepeating(() => void check(), pollMs).unref();
  schedule();

  return {
    close: () => {
      closed = true;
      timer?.clear();
      poll.clear();
      watcher?.close();
    },
  };
};
