/**
 * The clean-up steps of `sluice run` (src/app/wiring-sidecar.ts): each part registers its step as
 * it is built, `first` before the steps already there, `last` after; a failing step is logged
 * and the next one still runs.
 */
import { Writable } from 'node:stream';
import { createCleanups } from '../../../src/app/wiring-sidecar';
import { createLogger } from '../../../src/logger';

const silent = createLogger({ level: 'silent', destination: new Writable({ write: (_c, _e, done) => done() }) });

describe('the clean-up steps of a run', () => {
  it('run first-registered ones ahead of the others, last-registered ones after, in that order', async () => {
    const ran: string[] = [];
    const cleanups = createCleanups();
    const step = (name: string) => () => void ran.push(name);
    cleanups.last(step('admin'));
    cleanups.last(step('quotas'));
    cleanups.first(step('usage'));
    cleanups.first(step('producer'));
    cleanups.last(step('http'));
    await cleanups.run(silent);
    expect(ran).toEqual(['producer', 'usage', 'admin', 'quotas', 'http']);
  });

  it('go on past a step that fails or rejects', async () => {
    const ran: string[] = [];
    const cleanups = createCleanups();
    cleanups.last(() => {
      throw new Error('sync failure');
    });
    cleanups.last(() => Promise.reject(new Error('async failure')));
    cleanups.last(async () => void ran.push('after'));
    await expect(cleanups.run(silent)).resolves.toBeUndefined();
    expect(ran).toEqual(['after']);
  });
});
