/**
 * promtool (and prometheus) for the alert tests: the chart's rules are checked and unit-tested
 * with `promtool check rules` / `promtool test rules` (test/unit/helm/alerts.test.ts), and the
 * integration suite runs a real Prometheus against real sidecars. Both binaries come with
 * Debian's `prometheus` package. Found on SLUICE_PROMTOOL / SLUICE_PROMETHEUS, then PATH; when
 * missing and this process runs as root with apt-get, the package is installed (apt-get update
 * first only when the install fails without it). Otherwise it fails naming what to install.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

export type PrometheusTool = 'promtool' | 'prometheus';

const VARIABLE: Record<PrometheusTool, string> = { promtool: 'SLUICE_PROMTOOL', prometheus: 'SLUICE_PROMETHEUS' };

const onPath = (name: string): string | undefined => {
  const found = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
  return found.status === 0 && found.stdout.trim() ? found.stdout.trim() : undefined;
};

/** The binary's path from its variable or PATH; undefined when there is none. */
export const findPrometheusTool = (tool: PrometheusTool): string | undefined => {
  const fromEnv = process.env[VARIABLE[tool]];
  if (fromEnv && !existsSync(fromEnv)) throw new Error(`${VARIABLE[tool]} is ${fromEnv}, which does not exist: unset it or point it at ${tool}`);
  return fromEnv || onPath(tool) || (existsSync(`/usr/bin/${tool}`) ? `/usr/bin/${tool}` : undefined);
};

/** Whether this process may install the package itself (root, with apt-get). */
export const canInstallWithApt = (): boolean => process.getuid?.() === 0 && onPath('apt-get') !== undefined;

const WHAT_TO_INSTALL = "install Debian's prometheus package (apt-get install prometheus: it has promtool and prometheus) or Prometheus 2.x from https://prometheus.io/download/, or set SLUICE_PROMTOOL and SLUICE_PROMETHEUS";

const aptInstall = (say: (line: string) => void): void => {
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const install = (): ReturnType<typeof spawnSync> =>
    spawnSync('apt-get', ['install', '-y', '--no-install-recommends', 'prometheus'], { encoding: 'utf8', env, timeout: 600_000 });
  say('installing Debian\'s prometheus package (promtool, prometheus) with apt-get');
  let result = install();
  if (result.status !== 0) {
    spawnSync('apt-get', ['update'], { encoding: 'utf8', env, timeout: 600_000 });
    result = install();
  }
  if (result.status !== 0) throw new Error(`apt-get install prometheus failed (exit ${result.status}):\n${String(result.stderr).trim().split('\n').slice(-10).join('\n')}`);
};

/** Both binaries' paths, installing the package when they are missing and that is possible; throws naming what to install otherwise. */
export const ensurePrometheusTools = (say: (line: string) => void): Record<PrometheusTool, string> => {
  let promtool = findPrometheusTool('promtool');
  let prometheus = findPrometheusTool('prometheus');
  if ((!promtool || !prometheus) && canInstallWithApt()) {
    aptInstall(say);
    promtool = findPrometheusTool('promtool');
    prometheus = findPrometheusTool('prometheus');
  }
  if (!promtool || !prometheus) throw new Error(`no ${promtool ? 'prometheus' : 'promtool'} for the alert tests: ${WHAT_TO_INSTALL}`);
  return { promtool, prometheus };
};
