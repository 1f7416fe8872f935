/**
 * helm for the chart tests: scripts/install-helm.sh finds it (PATH, Go's bin folder) or builds
 * the pinned release with `go install`, which takes minutes: one line says so, and Go's output
 * is shown only when the build fails. Without Go it fails naming what to install.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { repoRoot } from '../services/paths';

const script = path.join(repoRoot, 'scripts', 'install-helm.sh');

/** The helm binary's path; throws with the installer's message when there is none. */
export const ensureHelm = (say: (line: string) => void): Promise<string> =>
  new Promise((resolve, reject) => {
    const child = spawn('bash', [script], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => {
      const text = chunk.toString();
      if (stderr === '' && text.startsWith('install-helm: building')) say(text.trim().replace(/^install-helm: /, ''));
      stderr += text;
    });
    child.once('error', reject);
    child.once('close', (code) => {
      const helm = stdout.trim().split('\n').pop() ?? '';
      if (code === 0 && helm !== '') resolve(helm);
      else reject(new Error(`no helm for the chart tests (scripts/install-helm.sh exited ${code}):\n${stderr.trim().split('\n').slice(-15).join('\n')}`));
    });
  });
