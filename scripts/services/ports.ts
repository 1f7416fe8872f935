/** Loopback ports: pick free ones, and ask whether something answers on one. */
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';

export const HOST = '127.0.0.1';

/** Where listeners are chosen from when the kernel's range for outgoing connections is known. */
const LOWEST_PORT = 15000;

/**
 * The kernel's range for the local ports of outgoing connections (Linux). A port chosen inside
 * it can be taken between choosing and binding by any client that connects meanwhile (a broker
 * once failed to start in CI so), so listeners are chosen below it.
 */
export const ephemeralRange = (file = '/proc/sys/net/ipv4/ip_local_port_range'): { low: number; high: number } | undefined => {
  try {
    const [low, high] = fs.readFileSync(file, 'utf8').trim().split(/\s+/).map(Number);
    return Number.isInteger(low) && Number.isInteger(high) && low <= high ? { low, high } : undefined;
  } catch {
    return undefined;
  }
};

/** A port nobody listens on right now, chosen by the kernel (inside its range for outgoing connections). */
const kernelPort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, HOST, () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });

/**
 * A port nobody listens on right now and no outgoing connection will take: a random free one
 * from LOWEST_PORT up to below the kernel's range for outgoing connections (less `reserve`, room
 * for a port + reserve that must be free too). Where that range is unknown or leaves no room, the
 * kernel picks.
 */
export const freePort = async (reserve = 0, range = ephemeralRange()): Promise<number> => {
  const end = range === undefined ? 0 : range.low - reserve;
  if (end - LOWEST_PORT >= 1000) {
    for (let attempt = 0; attempt < 50; attempt += 1) {
      const port = crypto.randomInt(LOWEST_PORT, end);
      if (await isPortFree(port)) return port;
    }
  }
  return kernelPort();
};

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
    const port = await freePort(busOffset);
    if (ports.includes(port) || ports.includes(port + busOffset)) continue;
    if (busOffset > 0 && (port + busOffset > 65535 || !(await isPortFree(port + busOffset)))) continue;
    ports.push(port);
  }
  if (ports.length < count) throw new Error(`could not find ${count} free loopback ports`);
  return ports;
};
