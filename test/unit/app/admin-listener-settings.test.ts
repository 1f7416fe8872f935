/**
 * `sluice run` refuses, before it connects to anything, an admin listener that would answer
 * anyone: http.adminHost off loopback while http.adminToken is empty (exit 1, naming the keys).
 */
import { Writable } from 'node:stream';
import { runHandler } from '../../../src/app/handlers';
import { runSidecar } from '../../../src/app/run-sidecar';
import { loadConfig } from '../../../src/config';
import { createLogger } from '../../../src/logger';

// Nothing listens on port 1: reaching for Kafka would fail with exit 2, not 1.
const env = { SLUICE_INGRESS_TOPIC: 'events', SLUICE_DOWNSTREAM_TOPIC: 'events.out', SLUICE_KAFKA_BROKERS: '127.0.0.1:1', SLUICE_LOG_LEVEL: 'silent' };
const silent = createLogger({ level: 'silent', destination: new Writable({ write: (_c, _e, done) => done() }) });

describe('the admin listener settings', () => {
  it('default to loopback, port 9465', () => {
    expect(loadConfig({ env }).http).toMatchObject({ host: '0.0.0.0', port: 9464, adminHost: '127.0.0.1', adminPort: 9465 });
    expect(loadConfig({ env: { ...env, SLUICE_HTTP_ADMIN_HOST: '::1', SLUICE_HTTP_ADMIN_PORT: '0' } }).http).toMatchObject({ adminHost: '::1', adminPort: 0 });
  });

  describe('when http.adminHost is not loopback and http.adminToken is empty', () => {
    it('stops sluice run before it connects, with a config error naming the keys', async () => {
      const config = loadConfig({ env: { ...env, SLUICE_HTTP_ADMIN_HOST: '0.0.0.0' } });
      const run = runSidecar({ config, logger: silent, stopSignal: new Promise(() => undefined) });
      await expect(run).rejects.toMatchObject({ code: 'CONFIG_INVALID' });
      await expect(run).rejects.toThrow(/http\.adminHost = "0\.0\.0\.0" \(SLUICE_HTTP_ADMIN_HOST\).*http\.adminToken \(SLUICE_HTTP_ADMIN_TOKEN\)/);
    });

    it('ends the command with exit 1', async () => {
      const context = { env: { ...env, SLUICE_HTTP_ADMIN_HOST: '10.0.0.7' }, stopSignal: new Promise(() => undefined), stderr: { write: () => true } };
      await expect(runHandler(context)({})).resolves.toBe(1);
    });
  });
});
