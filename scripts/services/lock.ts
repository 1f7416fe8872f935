/**
 * One `up` at a time per service: a lock file holding the owner's pid, taken over when that
 * process is gone. Several engineers (and test runs) call `up` at once on one machine.
 */
import fs from 'node:fs';
import path from 'node:path';
import { servicesDir } from './paths';
import { isAlive } from './processes';
import { progress } from './log';
import { ServicesError } from './errors';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const tryLock = (file: string): boolean => {
  try {
    fs.writeFileSync(file, String(process.pid), { flag: 'wx' });
    return true;
  } catch {
    const holder = Number(fs.readFileSync(file, 'utf8').trim() || '0');
    if (holder > 0 && holder !== process.pid && isAlive(holder)) return false;
    fs.rmSync(file, { force: true });
    return false;
  }
};

export const withLock = async <T>(name: string, work: () => Promise<T>, timeoutMs = 15 * 60_000): Promise<T> => {
  fs.mkdirSync(servicesDir(), { recursive: true });
  const file = path.join(servicesDir(), `${name}.lock`);
  const deadline = Date.now() + timeoutMs;
  let told = false;
  while (!tryLock(file)) {
    if (Date.now() > deadline) throw new ServicesError(`${name}: another \`services up\` still holds ${file}`);
    if (!told) progress(`${name}: waiting for another \`services up\` to finish`);
    told = true;
    await sleep(250);
  }
  try {
    return await work();
  } finally {
    fs.rmSync(file, { force: true });
  }
};
