/** Finds the real helm binary (PATH, then $(go env GOPATH)/bin) and runs it on helm/sluice. */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';

export const chartDir = join(__dirname, '../../../helm/sluice');

const onPath = (): string | undefined => {
  const found = spawnSync('sh', ['-c', 'command -v helm'], { encoding: 'utf8' });
  return found.status === 0 && found.stdout.trim() ? found.stdout.trim() : undefined;
};

const inGoPath = (): string | undefined => {
  const go = spawnSync('go', ['env', 'GOPATH'], { encoding: 'utf8' });
  if (go.status !== 0) return undefined;
  const candidate = join(go.stdout.trim(), 'bin', 'helm');
  return existsSync(candidate) ? candidate : undefined;
};

export const findHelm = (): string => {
  const helm = onPath() ?? inGoPath();
  if (!helm) {
    throw new Error('helm is not installed: run scripts/install-helm.sh (it builds helm v3 with `go install` into $(go env GOPATH)/bin), then run the tests again');
  }
  return helm;
};

export interface HelmResult {
  status: number;
  stdout: string;
  stderr: string;
}

export const runHelm = (args: string[]): HelmResult => {
  const result = spawnSync(findHelm(), args, { cwd: chartDir, encoding: 'utf8', timeout: 60_000 });
  return { status: result.status ?? -1, stdout: result.stdout, stderr: result.stderr };
};

export type Manifest = { kind: string; metadata: { name: string; labels?: Record<string, string> }; spec?: any; data?: Record<string, string> }; // eslint-disable-line @typescript-eslint/no-explicit-any

/** `helm template` → parsed manifests; throws with helm's message when it fails. */
export const render = (release: string, args: string[] = []): Manifest[] => {
  const out = execFileSync(findHelm(), ['template', release, '.', ...args], { cwd: chartDir, encoding: 'utf8', timeout: 60_000, stdio: 'pipe' });
  return parseAllDocuments(out)
    .map((doc) => doc.toJS() as Manifest | null)
    .filter((m): m is Manifest => m !== null);
};

export const byKind = (manifests: Manifest[], kind: string): Manifest[] => manifests.filter((m) => m.kind === kind);
export const one = (manifests: Manifest[], kind: string, nameEnd = ''): Manifest => {
  const found = manifests.filter((m) => m.kind === kind && m.metadata.name.endsWith(nameEnd));
  if (found.length !== 1) throw new Error(`expected one ${kind} *${nameEnd}, found ${found.length}`);
  return found[0];
};
