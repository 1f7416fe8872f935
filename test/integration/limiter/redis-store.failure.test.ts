import net from 'node:net';
import type Redis from 'ioredis';
import { freePort } from '../../../scripts/services/ports';
import { SluiceError } from '../../../src/errors';
import { createRedisClient } from '../../../src/limit/redis-client';
import { createRedisStore } from '../../../src/limit/redis-store';
import { rule } from '../../contracts/limiter-harness';
import { waitFor } from '../../helpers/wait';
import { ready } from './redis-harness';

// the integration project's testTimeout is not applied per project: set it here
jest.setTimeout(60_000);

const spec = rule({ rate: '10/s' });

/** A loopback server that speaks just enough RESP to look ready, then never answers a script call. */
const silentRedis = async (): Promise<{ port: number; scriptCalls: () => number; close: () => Promise<void> }> => {
  let calls = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('data', (data) => {
      const text = data.toString('latin1').toUpperCase();
      calls += (text.match(/EVALSHA|\bEVAL\b/g) ?? []).length;
      if (text.includes('INFO')) socket.write('$11\r\nloading:0\r\n\r\n');
    });
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  const close = async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return { port, scriptCalls: () => calls, close };
};

describe('Redis store when Redis is in trouble', () => {
  describe('when Redis is down at start', () => {
    it('creates the client without throwing and refuses decisions at once with a retriable STORE_UNAVAILABLE', async () => {
      const errors: Error[] = [];
      const redis = createRedisClient({ url: `redis://127.0.0.1:${await freePort()}`, timeoutMs: 200, onError: (e) => errors.push(e) });
      try {
        const store = createRedisStore({ redis, keyPrefix: 'down:', timeoutMs: 200 });
        const started = Date.now();
        const failure = await store.decide({ producer: 'p', rule: spec, sizes: [1] }).catch((error: unknown) => error);
        expect(failure).toBeInstanceOf(SluiceError);
        expect(failure).toMatchObject({ code: 'STORE_UNAVAILABLE', retriable: true });
        expect(Date.now() - started).toBeLessThan(1000);
        await waitFor(() => errors.length > 0, { timeoutMs: 5000, message: 'a connection error reported to onError' });
      } finally {
        redis.disconnect();
      }
    });
  });

  describe('when Redis takes longer than timeoutMs to answer', () => {
    it('fails the call after timeoutMs and never sends the script again', async () => {
      const server = await silentRedis();
      const redis = createRedisClient({ url: `redis://127.0.0.1:${server.port}`, timeoutMs: 200 }) as Redis;
      try {
        await ready(redis);
        const store = createRedisStore({ redis, keyPrefix: 'slow:', timeoutMs: 200 });
        const started = Date.now();
        await expect(store.decide({ producer: 'p', rule: spec, sizes: [1, 1] })).rejects.toMatchObject({
          code: 'STORE_UNAVAILABLE',
          retriable: true,
          message: expect.stringMatching(/^Redis decide failed/),
        });
        const elapsed = Date.now() - started;
        expect(elapsed).toBeGreaterThanOrEqual(190);
        expect(elapsed).toBeLessThan(1000);
        await waitFor(() => Date.now() - started > 1500, { timeoutMs: 3000, intervalMs: 100, message: 'time for a retry to show' });
        expect(server.scriptCalls()).toBe(1);
      } finally {
        redis.disconnect();
        await server.close();
      }
    });
  });
});
