/**
 * The connection cap of one listener: one connection past it closes the oldest that is not
 * being answered, so a newcomer (a probe) gets in; a connection being answered is never cut.
 */
import { createServer, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { MAIN_LIMITS, applyLimits, serverOptionsOf } from '../../../src/http/server-limits';
import { waitFor } from '../../helpers/wait';

interface Client {
  socket: Socket;
  closed: boolean;
  answer: string;
}

const open = (port: number): Promise<Client> =>
  new Promise((resolve) => {
    const client: Client = { socket: connect(port, '127.0.0.1'), closed: false, answer: '' };
    client.socket.on('data', (chunk: Buffer) => (client.answer += chunk.toString()));
    client.socket.on('close', () => (client.closed = true));
    client.socket.on('error', () => undefined);
    client.socket.once('connect', () => resolve(client));
  });

describe('the connection cap', () => {
  let server: Server;
  let port: number;
  let hold: () => void;
  let received = 0;
  const clients: Client[] = [];

  beforeEach(async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    hold = () => release();
    received = 0;
    server = createServer(serverOptionsOf(MAIN_LIMITS), (request, response) => {
      received += 1;
      if (request.url === '/slow') void held.then(() => response.end('slow done'));
      else response.end('ok');
    });
    applyLimits(server, { ...MAIN_LIMITS, maxConnections: 3 });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });

  afterEach(async () => {
    hold();
    for (const client of clients.splice(0)) client.socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });

  const openOne = async (): Promise<Client> => {
    const client = await open(port);
    clients.push(client);
    return client;
  };

  describe('when a connection comes past the cap', () => {
    it('closes the oldest idle connection and serves the newcomer', async () => {
      const [first, second, third] = [await openOne(), await openOne(), await openOne()];
      const newcomer = await openOne();
      newcomer.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
      await waitFor(() => first.closed && newcomer.answer.includes('ok'), { timeoutMs: 2000, intervalMs: 10, message: 'the oldest to close and the newcomer to be answered' });
      expect([second.closed, third.closed]).toEqual([false, false]);
    });
  });

  describe('when the oldest connection is being answered', () => {
    it('keeps it and closes the next oldest idle one', async () => {
      const busy = await openOne();
      busy.socket.write('GET /slow HTTP/1.1\r\nHost: x\r\n\r\n');
      await waitFor(() => received === 1, { timeoutMs: 2000, intervalMs: 5, message: 'the request to arrive' });
      const [idle, other] = [await openOne(), await openOne()];
      await openOne();
      await waitFor(() => idle.closed, { timeoutMs: 2000, intervalMs: 10, message: 'the oldest idle connection to close' });
      expect(busy.closed).toBe(false);
      expect(other.closed).toBe(false);
      hold();
      await waitFor(() => busy.answer.includes('slow done'), { timeoutMs: 2000, intervalMs: 10, message: 'the busy connection to be answered' });
    });
  });

  describe('when every other connection is being answered', () => {
    it('refuses the newcomer', async () => {
      const busy = [await openOne(), await openOne(), await openOne()];
      for (const client of busy) client.socket.write('GET /slow HTTP/1.1\r\nHost: x\r\n\r\n');
      await waitFor(() => received === 3, { timeoutMs: 2000, intervalMs: 5, message: 'the requests to arrive' });
      const newcomer = await openOne();
      await waitFor(() => newcomer.closed, { timeoutMs: 2000, intervalMs: 10, message: 'the newcomer to be refused' });
      expect(busy.map((c) => c.closed)).toEqual([false, false, false]);
    });
  });
});
