import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { checkKafkajsPatch, type RecordCodec } from '../../../src/app/kafkajs-patch';

const root = resolve(__dirname, '../../..');

/** The record codec of the kafkajs installed at `kafkajsDir` (the check's own is the running kafkajs's). */
const codecIn = (kafkajsDir: string): RecordCodec => {
  const load = createRequire(join(kafkajsDir, 'package.json'));
  return {
    encode: load('./src/protocol/recordBatch/record/v0') as RecordCodec['encode'],
    Decoder: load('./src/protocol/decoder') as RecordCodec['Decoder'],
    decode: load('./src/protocol/recordBatch/record/v0/decoder') as RecordCodec['decode'],
  };
};

describe('the kafkajs patch check', () => {
  it('passes on the installed, patched kafkajs', () => {
    expect(() => checkKafkajsPatch()).not.toThrow();
  });

  it('refuses an unpatched kafkajs with one line naming the fix (exit 3)', () => {
    // A copy of the installed kafkajs with the patch taken out again.
    const work = mkdtempSync(join(tmpdir(), 'sluice-kafkajs-'));
    try {
      const kafkajs = join(work, 'node_modules', 'kafkajs');
      cpSync(dirname(require.resolve('kafkajs/package.json')), kafkajs, { recursive: true });
      const patch = readFileSync(join(root, 'patches', 'kafkajs+2.2.4.patch'), 'utf8');
      execFileSync('git', ['apply', '-R', '--directory=node_modules/kafkajs', '-p3', '-'], { cwd: work, input: patch, stdio: ['pipe', 'pipe', 'pipe'] });
      let error: unknown;
      try {
        checkKafkajsPatch(codecIn(kafkajs));
      } catch (e) {
        error = e;
      }
      expect(error).toMatchObject({ code: 'INTERNAL' });
      expect((error as Error).message).toMatch(/^kafkajs is not patched for sluice: .*patch-package/);
      expect((error as Error).message).not.toContain('\n');
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  });
});

describe('a production install', () => {
  it('applies the patch: patch-package is a production dependency and runs on install', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; scripts: Record<string, string> };
    expect(pkg.dependencies['patch-package']).toBeDefined();
    expect(pkg.scripts.postinstall).toBe('patch-package');
  });
});
