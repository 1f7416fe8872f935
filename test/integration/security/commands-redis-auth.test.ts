/**
 * `sluice usage` and `sluice status` against a Redis that requires AUTH: they reach it with
 * redis.password, as `sluice run` does (the handlers run in this process, settings from an
 * environment of the test's own).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HandlerContext } from '../../../src/app/handlers';
import { statusHandler } from '../../../src/status/status-handler';
import { usageHandler } from '../../../src/status/usage-handler';
import { randomKeyPrefix } from '../../helpers/names';
import { startPrivateRedis, type PrivateRedis } from './private-redis';

const PASSWORD = 'auth-Pa55-w0rd-commands';

const dir = mkdtempSync(join(tmpdir(), 'sluice-commands-auth-'));
const quotasFile = join(dir, 'quotas.yaml');
writeFileSync(quotasFile, 'default:\n  rate: 10/s\n  queue: 1m\n');

describe('a Redis that requires a password', () => {
  let server: PrivateRedis;
  beforeAll(async () => {
    server = await startPrivateRedis({ password: PASSWORD });
  });
  afterAll(async () => {
    await server?.stop();
  });

  const run = async (command: (context: HandlerContext, out: { write(text: string): boolean }) => Promise<number>) => {
    let text = '';
    const out = { write: (chunk: string) => ((text += chunk), true) };
    const env = {
      SLUICE_INGRESS_TOPIC: 'events', SLUICE_DOWNSTREAM_TOPIC: 'events.out', SLUICE_QUOTAS_FILE: quotasFile, SLUICE_LOG_LEVEL: 'silent',
      SLUICE_REDIS_URL: server.url, SLUICE_REDIS_PASSWORD: PASSWORD, SLUICE_REDIS_KEY_PREFIX: randomKeyPrefix('commands-auth'),
    };
    const code = await command({ env, stopSignal: new Promise(() => undefined), stderr: out }, out);
    return { code, text };
  };

  describe('when redis.password is set', () => {
    it('lets sluice usage read the history', async () => {
      const { code, text } = await run((context, out) => usageHandler(context, out)({ producer: 'billing', json: true }));
      expect({ code, text }).toMatchObject({ code: 0 });
      expect(JSON.parse(text)).toHaveProperty('totals');
    });

    it('lets sluice status read the producer', async () => {
      const { code, text } = await run((context, out) => statusHandler(context, out)({ producer: 'billing' }));
      expect({ code, text }).toMatchObject({ code: 0 });
      expect(text).toContain('billing');
    });
  });
});
