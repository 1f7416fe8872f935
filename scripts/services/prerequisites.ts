/** The programs the services need: find them, or say in one line exactly what to install. */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { EXIT_PREREQUISITE_MISSING, ServicesError } from './errors';
import { progress } from './log';

export const which = (command: string): string | undefined =>
  (process.env.PATH ?? '')
    .split(path.delimiter)
    .map((dir) => path.join(dir, command))
    .find((file) => {
      try {
        fs.accessSync(file, fs.constants.X_OK);
        return true;
      } catch {
        return false;
      }
    });

export const requireJavaAndMaven = (): void => {
  const missing = [
    ['java', 'a JDK 17+ (Debian: apt-get install -y openjdk-17-jdk-headless)'],
    ['mvn', 'Maven (Debian: apt-get install -y maven)'],
  ].filter(([command]) => which(command) === undefined);
  if (missing.length > 0) {
    const what = missing.map(([command, install]) => `\`${command}\` not found: install ${install}`).join('; ');
    throw new ServicesError(`the Kafka broker needs Java and Maven: ${what}`, EXIT_PREREQUISITE_MISSING);
  }
};

const aptInstall = (packages: string[]): boolean => {
  const run = (args: string[]): boolean =>
    spawnSync('apt-get', args, { stdio: ['ignore', 2, 2], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } })
      .status === 0;
  return run(['install', '-y', ...packages]) || (run(['update']) && run(['install', '-y', ...packages]));
};

/** redis-server and redis-cli: installed with apt-get when missing and we are root. */
export const ensureRedisInstalled = (): void => {
  if (which('redis-server') !== undefined && which('redis-cli') !== undefined) return;
  const install = 'apt-get install -y redis-server redis-tools';
  if (process.getuid?.() === 0 && which('apt-get') !== undefined) {
    progress(`redis-server is missing: running ${install}`);
    if (aptInstall(['redis-server', 'redis-tools']) && which('redis-server') !== undefined) return;
  }
  throw new ServicesError(`redis-server and redis-cli are missing: install them with \`sudo ${install}\``, EXIT_PREREQUISITE_MISSING);
};
