import { SluiceError } from '../../../src/errors';
import { runCli } from '../../../src/cli/run-cli';
import type { CommandHandlers, DrainOptions, RunOptions, StatusOptions } from '../../../src/cli/types';

const capture = () => {
  const chunks: string[] = [];
  return { write: (text: string) => chunks.push(text), text: () => chunks.join('') };
};

const setup = (result: number | Error = 0) => {
  const calls: Array<[string, RunOptions | DrainOptions | StatusOptions]> = [];
  const answer = async (name: string, opts: RunOptions | DrainOptions | StatusOptions): Promise<number> => {
    calls.push([name, opts]);
    if (result instanceof Error) throw result;
    return result;
  };
  const handlers: CommandHandlers = {
    run: (opts) => answer('run', opts),
    drain: (opts) => answer('drain', opts),
    status: (opts) => answer('status', opts),
  };
  const out = capture();
  const err = capture();
  const cli = (...args: string[]) => runCli(['node', 'sluice', ...args], handlers, { env: {}, out, err, version: '1.2.3' });
  return { calls, out, err, cli };
};

describe('runCli', () => {
  describe('when sluice run is given a config file', () => {
    it('calls the run handler and exits with its code', async () => {
      const { calls, cli } = setup(2);
      expect(await cli('run', '--config', 'sluice.yaml')).toBe(2);
      expect(calls).toEqual([['run', { config: 'sluice.yaml' }]]);
    });
  });

  describe('when sluice drain is given every option', () => {
    it('passes them parsed to the drain handler', async () => {
      const { calls, cli } = setup();
      expect(await cli('drain', '-c', 'f.yaml', '--topic', 'orders.dlq', '--ignore-delay', '--dry-run', '--max', '50', '--force')).toBe(0);
      expect(calls).toEqual([['drain', { config: 'f.yaml', topic: 'orders.dlq', ignoreDelay: true, dryRun: true, max: 50, force: true }]]);
    });

    it('defaults the flags to false', async () => {
      const { calls, cli } = setup();
      await cli('drain');
      expect(calls).toEqual([['drain', { ignoreDelay: false, dryRun: false, force: false }]]);
    });
  });

  describe('when sluice status names a producer', () => {
    it('passes the producer to the status handler', async () => {
      const { calls, cli } = setup();
      await cli('status', 'billing', '--config', 'f.yaml');
      expect(calls).toEqual([['status', { config: 'f.yaml', producer: 'billing' }]]);
    });

    it('passes no producer when none is named', async () => {
      const { calls, cli } = setup();
      await cli('status');
      expect(calls).toEqual([['status', {}]]);
    });
  });

  describe('when the arguments are wrong', () => {
    it('refuses a --max that is not a positive whole number with exit 1', async () => {
      const { calls, err, cli } = setup();
      expect(await cli('drain', '--max', 'ten')).toBe(1);
      expect(err.text()).toContain("error: option '--max <n>' argument 'ten' is invalid. expected a whole number ≥ 1.");
      expect(calls).toEqual([]);
    });

    it('refuses an unknown option with exit 1', async () => {
      const { err, cli } = setup();
      expect(await cli('run', '--confg', 'x')).toBe(1);
      expect(err.text()).toContain("error: unknown option '--confg'");
    });

    it('refuses an unknown command with exit 1', async () => {
      const { err, cli } = setup();
      expect(await cli('start')).toBe(1);
      expect(err.text()).toContain("error: unknown command 'start'");
    });

    it('refuses quotas check without a file with exit 1', async () => {
      const { err, cli } = setup();
      expect(await cli('quotas', 'check')).toBe(1);
      expect(err.text()).toContain("error: missing required argument 'file'");
    });

    it('refuses extra arguments with exit 1', async () => {
      const { err, cli } = setup();
      expect(await cli('run', 'extra')).toBe(1);
      expect(err.text()).toContain('error: too many arguments');
    });

    it('shows the help and exits 1 when no command is given', async () => {
      const { err, cli } = setup();
      expect(await cli()).toBe(1);
      expect(err.text()).toContain('Usage: sluice');
    });
  });

  describe('when asked for help or the version', () => {
    it('prints the version and exits 0', async () => {
      const { out, cli } = setup();
      expect(await cli('--version')).toBe(0);
      expect(out.text()).toBe('1.2.3\n');
    });

    it('lists the commands and exits 0', async () => {
      const { out, cli } = setup();
      expect(await cli('--help')).toBe(0);
      for (const command of ['run', 'drain', 'quotas', 'status']) expect(out.text()).toContain(command);
    });

    it('lists the options of drain', async () => {
      const { out, cli } = setup();
      expect(await cli('drain', '--help')).toBe(0);
      for (const option of ['--topic', '--ignore-delay', '--dry-run', '--max', '--force', '--config']) expect(out.text()).toContain(option);
    });
  });

  describe('when a handler throws', () => {
    it('prints a SluiceError once and exits with its code', async () => {
      const { err, cli } = setup(new SluiceError('TOPIC_INVALID', 'topic orders.out does not exist'));
      expect(await cli('run')).toBe(2);
      expect(err.text()).toBe('sluice: topic orders.out does not exist\n');
    });

    it('exits 1 for invalid settings', async () => {
      const { cli } = setup(new SluiceError('CONFIG_INVALID', 'mode = "x" (from SLUICE_MODE): expected one of enforce, shadow'));
      expect(await cli('status')).toBe(1);
    });

    it('exits 3 for anything else', async () => {
      const { err, cli } = setup(new Error('boom'));
      expect(await cli('drain')).toBe(3);
      expect(err.text()).toMatch(/^sluice: internal error: Error: boom/);
    });
  });
});
