/** Loopback ports: pick free ones, and ask whether something answers on one. */
import net from 'node:net';

export const HOST = '127.0.0.1';

/** A port nobody listens on right now (the kernel picks it). */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, HOST, () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });

/** Whether `port` can be bound on loopback now. */
export const isPortFree = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, HOST, () => server.close(() => resolve(true)));
  });

/** Whether something accepts a TCP connection on `port`. */
export const portAnswers = (port: number, timeoutMs = 1000): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = net.connect({ host: HOST, port });
    const finish = (answered: boolean): void => {
      socket.destroy();
      resolve(answered);
    };
    socket.setTimeout(timeoutMs, () => finish(false));
    socket.once('connect', () => finish(true));
    socket.once('error', () => finish(false));
  });

/**
 * `count` distinct free ports; with `busOffset` each port + offset must be free too
 * (Redis Cluster uses port + 10000 for its bus).
 */
export const freePorts = async (count: number, busOffset = 0): Promise<number[]> => {
  const ports: number[] = [];
  for (let attempt = 0; ports.length < count && attempt < 200; attempt += 1) {
    const port = await freePort();
    if (ports.includes(port) || ports.includes(port + busOffset)) continue;
    if (busOffset > 0 && (port + busOffset > 65535 || !(await isPortFree(port + busOffset)))) continue;
    ports.push(port);
  }
  if (ports.length < count) throw new Error(`could not find ${count} free loopback ports`);
  return ports;
};
