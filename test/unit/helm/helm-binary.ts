/**
 * Finds the real helm binary and runs it on helm/sluice: SLUICE_HELM (set by `npm test`, which
 * builds helm when it is missing), then PATH, then Go's bin folder ($(go env GOBIN), else
 * $(go env GOPATH)/bin), where scripts/install-helm.sh builds it.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';

export const chartDir = join(__dirname, '../../../helm/sluice');

const onPath = (): string | undefined => {
  const found = spawnSync('sh', ['-c', 'command -v helm'], { encoding: 'utf8' });
  return found.status === 0 && found.stdout.trim() ? found.stdout.trim() : undefined;
};

const inGoBin = (): string | undefined => {
  const go = spawnSync('go', ['env', 'GOBIN', 'GOPATH'], { encoding: 'utf8' });
  if (go.status !== 0) return undefined;
  const [gobin, gopath] = go.stdout.split('\n').map((line) => line.trim());
  const candidate = join(gobin || join(gopath ?? '', 'bin'), 'helm');
  return existsSync(candidate) ? candidate : undefined;
};

const fromEnv = (): string | undefined => {
  const helm = process.env.SLUICE_HELM;
  if (helm && !existsSync(helm)) throw new Error(`SLUICE_HELM is ${helm}, which does not exist: unset it or point it at a helm v3 binary`);
  return helm || undefined;
};

let found: string | undefined;

export const findHelm = (): string => {
  found ??= fromEnv() ?? onPath() ?? inGoBin();
  if (!found) {
    throw new Error('helm is not installed: run the tests with `npm test` (it builds helm when Go is installed) or run scripts/install-helm.sh, then run the tests again');
  }
  return found;
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
