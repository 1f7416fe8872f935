/**
 * What `up` started, one state file per service (`.services/<name>/state.json`), so a later
 * `up` can reuse it and `down` stops exactly those process groups.
 */
import fs from 'node:fs';
import path from 'node:path';
import { serviceDir, servicesDir } from './paths';

export interface ServiceState {
  name: string; // kafka-<version>, redis or redis-cluster
  pids: number[]; // process group leaders
  ports: number[];
  marker: string; // a word of the command line, checked before signalling a pid
  logFiles: string[];
  env: Record<string, string>; // the KEY=value lines `up` prints for it
  startedAt: string;
}

const stateFile = (name: string): string => path.join(serviceDir(name), 'state.json');

export const readState = (name: string): ServiceState | undefined => {
  try {
    return JSON.parse(fs.readFileSync(stateFile(name), 'utf8')) as ServiceState;
  } catch {
    return undefined;
  }
};

export const writeState = (state: ServiceState): void => {
  fs.mkdirSync(serviceDir(state.name), { recursive: true });
  const file = stateFile(state.name);
  fs.writeFileSync(`${file}.tmp`, `${JSON.stringify(state, null, 2)}\n`);
  fs.renameSync(`${file}.tmp`, file);
};

export const removeState = (name: string): void => {
  fs.rmSync(stateFile(name), { force: true });
};

/** Every service that has a state file. */
export const listStates = (): ServiceState[] => {
  let names: string[];
  try {
    names = fs.readdirSync(servicesDir());
  } catch {
    return [];
  }
  return names.sort().flatMap((name) => {
    const state = readState(name);
    return state === undefined ? [] : [state];
  });
};
