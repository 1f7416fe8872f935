import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { manualClock } from '../../../src/clock';
import type { SluiceError } from '../../../src/errors';
import { loadQuotas } from '../../../src/rules/load-quotas';
import { resolveRule } from '../../../src/rules/rule-index';
import type { QuotaRules } from '../../../src/rules/types';
import { watchQuotas, type QuotaWatcher } from '../../../src/rules/watch-quotas';

const waitFor = async (condition: () => boolean, what: string, timeoutMs = 5000): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};

const rateOf = (rules: QuotaRules | undefined, id: string) => (rules ? resolveRule(rules, id).limit?.labels.rate : undefined);

describe('watchQuotas', () => {
  let dir: string;
  let watcher: QuotaWatcher | undefined;
  let changes: Array<{ rules: QuotaRules; loadedAt: number }>;
  let errors: SluiceError[];
  const clock = manualClock(1_700_000_000_000);

  const start = (file: string, current?: QuotaRules) => {
    watcher = watchQuotas({
      file,
      current,
      clock,
      debounceMs: 20,
      pollMs: 60_000,
      onChange: (rules, loadedAt) => changes.push({ rules, loadedAt }),
      onError: (error) => errors.push(error),
    });
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'sluice-watch-'));
    changes = [];
    errors = [];
  });
  afterEach(() => {
    watcher?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  describe('when the file is edited in place', () => {
    it('reloads with the new rules and when they were loaded', async () => {
      const file = join(dir, 'quotas.yaml');
      writeFileSync(file, 'default: { rate: 10/s }\n');
      start(file, loadQuotas(file));
      writeFileSync(file, 'default: { rate: 20/s }\n');
      await waitFor(() => changes.length === 1, 'a reload');
      expect(rateOf(changes[0].rules, 'any')).toBe('20/s');
      expect(changes[0].loadedAt).toBe(1_700_000_000_000);
      expect(errors).toEqual([]);
    });
  });

  describe('when the file is a ConfigMap mounted as a directory', () => {
    const version = (name: string, text: string) => {
      mkdirSync(join(dir, name));
      writeFileSync(join(dir, name, 'quotas.yaml'), text);
    };

    it('reloads when ..data is swapped atomically', async () => {
      version('..2026_11_21_a', 'default: { rate: 10/s }\n');
      symlinkSync('..2026_11_21_a', join(dir, '..data'));
      symlinkSync('..data/quotas.yaml', join(dir, 'quotas.yaml'));
      const file = join(dir, 'quotas.yaml');
      start(file, loadQuotas(file));

      version('..2026_11_21_b', 'default: { rate: 30/s }\n');
      symlinkSync('..2026_11_21_b', join(dir, '..data_tmp'));
      renameSync(join(dir, '..data_tmp'), join(dir, '..data'));
      rmSync(join(dir, '..2026_11_21_a'), { recursive: true });

      await waitFor(() => changes.length === 1, 'a reload');
      expect(rateOf(changes[0].rules, 'any')).toBe('30/s');
    });
  });

  describe('when the new file is invalid', () => {
    it('reports it once and keeps the last good rules', async () => {
      const file = join(dir, 'quotas.yaml');
      writeFileSync(file, 'default: { rate: 10/s }\n');
      start(file, loadQuotas(file));
      writeFileSync(file, 'default: { rate: lots }\n');
      await waitFor(() => errors.length === 1, 'an error');
      expect(errors[0].code).toBe('QUOTA_INVALID');
      expect(errors[0].message).toBe(`${file}:1: default: rate: expected a rate N/s, N/m, N/h, N/d or N/<duration> such as "20/s", "1000/h" or "5/10s", got "lots"`);
      expect(changes).toEqual([]);

      writeFileSync(file, 'default: { rate: 40/s }\n');
      await waitFor(() => changes.length === 1, 'the fixed file');
      expect(rateOf(changes[0].rules, 'any')).toBe('40/s');
      expect(errors).toHaveLength(1);
    });
  });

  describe('when the file is rewritten with the same content', () => {
    it('does not reload', async () => {
      const file = join(dir, 'quotas.yaml');
      const other = join(dir, 'other.yaml');
      writeFileSync(file, 'default: { rate: 10/s }\n');
      start(file, loadQuotas(file));
      writeFileSync(file, 'default: { rate: 10/s }\n');
      writeFileSync(other, 'x');
      writeFileSync(file, 'default: { rate: 11/s }\n');
      await waitFor(() => changes.length === 1, 'the real change');
      expect(rateOf(changes[0].rules, 'any')).toBe('11/s');
    });
  });

  describe('when no current rules are given', () => {
    it('loads the file at start', async () => {
      const file = join(dir, 'quotas.yaml');
      writeFileSync(file, 'default: { rate: 5/s }\n');
      start(file);
      await waitFor(() => changes.length === 1, 'the first load');
      expect(rateOf(changes[0].rules, 'any')).toBe('5/s');
    });
  });

  describe('when the file disappears', () => {
    it('reports that it cannot be read and keeps the last good rules', async () => {
      const file = join(dir, 'quotas.yaml');
      writeFileSync(file, 'default: { rate: 10/s }\n');
      start(file, loadQuotas(file));
      rmSync(file);
      await waitFor(() => errors.length === 1, 'an error');
      expect(errors[0].message).toBe(`${file}: cannot read the quota file: no such file`);
      expect(changes).toEqual([]);
    });
  });
});
