import { loadConfig } from '../../../src/config';
import { Writable } from 'node:stream';
import { secretsOf } from '../../../src/config/redact';
import { createLogger } from '../../../src/logger';

const topics = { SLUICE_INGRESS_TOPIC: 'events', SLUICE_DOWNSTREAM_TOPIC: 'events.out' };

describe('the secrets of the settings', () => {
  describe('when every kind of secret is set', () => {
    const config = loadConfig({
      env: {
        ...topics,
        SLUICE_KAFKA_SASL_MECHANISM: 'plain', SLUICE_KAFKA_SASL_USERNAME: 'u', SLUICE_KAFKA_SASL_PASSWORD: 'sasl-pw',
        SLUICE_REDIS_URL: 'redis://default:url%40pw@redis:6379/0', SLUICE_REDIS_PASSWORD: 'redis-pw',
        SLUICE_HTTP_ADMIN_TOKEN: 'admin-tok',
      },
    });

    it('lists each for the logger to mask: the password inside redis.url as written and decoded, and the admin token', () => {
      expect(secretsOf(config).sort()).toEqual(['admin-tok', 'redis-pw', 'sasl-pw', 'url%40pw', 'url@pw'].sort());
    });

    it('masks each when the settings are logged', () => {
      const lines: string[] = [];
      const destination = new Writable({ write: (chunk, _encoding, done) => (lines.push(String(chunk)), done()) });
      createLogger({ level: 'info', destination }).info({ config }, 'settings');
      for (const secret of secretsOf(config)) expect(lines.join('')).not.toContain(secret);
      expect(JSON.parse(lines[0]).config.http.adminToken).toBe('[redacted]');
    });
  });

  describe('when none is set', () => {
    it('lists nothing', () => {
      expect(secretsOf(loadConfig({ env: topics }))).toEqual([]);
    });
  });
});
