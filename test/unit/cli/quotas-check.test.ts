import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { quotasCheck } from '../../../src/cli/quotas-check';
import { runCli } from '../../../src/cli/run-cli';

const capture = () => {
  const chunks: string[] = [];
  return { write: (text: string) => chunks.push(text), text: () => chunks.join('') };
};

const fixture = (name: string) => join(__dirname, '../../fixtures/quotas', name);
// Every file a test writes goes under one folder, removed when the file's tests end.
const dir = mkdtempSync(join(tmpdir(), 'sluice-check-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const temp = (name: string, text: string) => {
  const path = join(mkdtempSync(join(dir, 'case-')), name);
  writeFileSync(path, text);
  return path;
};

const check = (file: string, env: NodeJS.ProcessEnv = {}, configFile?: string) => {
  const out = capture();
  const err = capture();
  const code = quotasCheck({ file, configFile, env, out, err });
  return { code, out: out.text(), err: err.text() };
};

describe('sluice quotas check', () => {
  describe('when the file is valid', () => {
    it('prints the effective rule table in matching order and exits 0', () => {
      const file = fixture('contract-example.yaml');
      const { code, out, err } = check(file);
      expect(code).toBe(0);
      expect(err).toBe('');
      expect(out).toBe(
        [
          `${file}: 6 rules, in the order they are matched (exact, longest glob, file order, default):`,
          '',
          'PRODUCER    MATCH    ALGORITHM     RATE   QUEUE/BURST  BYTES     LIMITS                  FLAGS',
          'billing     exact    leaky-bucket  20/s   queue 1m     -         -                       -',
          'reports     exact    token-bucket  10/s   burst 100    -         -                       -',
          'canary      exact    leaky-bucket  1/s    queue 1m     -         -                       shadow',
          'internal-*  glob     -             -      -            -         -                       unlimited',
          'batch-*     glob     leaky-bucket  5/s    queue 0      512KiB/s  1000/h, 20000/1d fixed  -',
          'default     default  leaky-bucket  100/s  queue 1m     -         -                       -',
          '',
          'OK',
          '',
        ].join('\n'),
      );
    });
  });

  describe('when a rule may delay messages past retry.maxAge', () => {
    it('warns with the file and line, and still exits 0', () => {
      const file = temp('q.yaml', 'default: { rate: 10/s }\nproducers:\n  slow: { rate: 1/m, queue: 3h }\n');
      const { code, out } = check(file, { SLUICE_RETRY_MAX_AGE: '2h' });
      expect(code).toBe(0);
      expect(out).toContain(
        `\nwarning: ${file}:3: rule "slow" may delay a message by up to 3h (queue 3h), longer than retry.maxAge (2h): such messages are dead-lettered\n\nOK with 1 warning\n`,
      );
    });

    it('reads retry.maxAge from --config', () => {
      const file = temp('q.yaml', 'default: { rate: 10/s, queue: 2h }\n');
      const config = temp('sluice.yaml', 'retry:\n  maxAge: 1h\n');
      expect(check(file, {}, config).out).toContain('OK with 1 warning');
    });
  });

  describe('when the settings say shadow mode', () => {
    it('warns that nothing is enforced', () => {
      expect(check(fixture('contract-example.yaml'), { SLUICE_MODE: 'shadow' }).out).toContain(
        'warning: mode is shadow: no rule is enforced, every message is forwarded and only measured',
      );
    });
  });

  describe('when the file is invalid', () => {
    it('prints file:line: reason and exits 1', () => {
      const file = fixture('bad-rate.yaml');
      const { code, out, err } = check(file);
      expect(code).toBe(1);
      expect(out).toBe('');
      expect(err).toBe(`${file}:5: producer "billing": rate: expected a rate N/s, N/m, N/h, N/d or N/<duration> such as "20/s", "1000/h" or "5/10s", got "fast"\n`);
    });

    it('names a missing file and exits 1', () => {
      const { code, err } = check('/nonexistent/quotas.yaml');
      expect(code).toBe(1);
      expect(err).toBe('/nonexistent/quotas.yaml: cannot read the quota file: no such file\n');
    });
  });

  describe('when the settings are invalid', () => {
    it('says which and exits 1', () => {
      const { code, err } = check(fixture('contract-example.yaml'), { SLUICE_RETRY_MAX_AGE: 'soon' });
      expect(code).toBe(1);
      expect(err).toBe('retry.maxAge = "soon" (from SLUICE_RETRY_MAX_AGE): expected a duration > 0 such as 500ms, 5s, 1m, 1h or 1d (not a number followed by a unit)\n');
    });
  });

  describe('when run from the command line', () => {
    it('exits with the check result', async () => {
      const out = capture();
      const err = capture();
      const handlers = { run: async () => 0, drain: async () => 0, status: async () => 0 };
      const argv = ['node', 'sluice', 'quotas', 'check', fixture('duplicate-producer.yaml')];
      expect(await runCli(argv, handlers, { env: {}, out, err, version: '0' })).toBe(1);
      expect(err.text()).toBe(`${fixture('duplicate-producer.yaml')}:8: duplicate producer "billing" (first at line 4)\n`);
    });
  });

  describe('when checking the shipped quota files', () => {
    it.each(['config/quotas.yaml', 'config/demo-quotas.yaml'])('finds %s valid without warnings', (path) => {
      const { code, out } = check(join(__dirname, '../../..', path));
      expect(code).toBe(0);
      expect(out).toMatch(/\nOK\n$/);
    });
  });
});
