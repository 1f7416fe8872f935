import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ephemeralRange, freePort, freePorts, isPortFree } from '../../../scripts/services/ports';

describe('choosing a loopback port for a service', () => {
  const range = ephemeralRange();

  (range === undefined ? it.skip : it)('chooses below the kernel\'s range for outgoing connections, where no client can take it meanwhile', async () => {
    const { low } = range!;
    const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(15000);
      expect(port).toBeLessThan(low);
    }
  });

  it('leaves room for port + reserve below that range too (a Redis Cluster bus)', async () => {
    const ports = await freePorts(3, 10000);
    for (const port of ports) expect(port + 10000).toBeLessThan(ephemeralRange()?.low ?? 65536);
    expect(new Set(ports).size).toBe(3);
    for (const port of ports) expect(await isPortFree(port + 10000)).toBe(true);
  });

  it('lets the kernel pick where the range leaves no room below it', async () => {
    const port = await freePort(0, { low: 15500, high: 60999 });
    expect(await isPortFree(port)).toBe(true);
    if (range !== undefined) expect(port).toBeGreaterThanOrEqual(range.low);
  });

  it('reads the range from the kernel\'s file, and nothing from a file that is not one', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-ports-'));
    try {
      const good = path.join(dir, 'good');
      fs.writeFileSync(good, '32768\t60999\n');
      expect(ephemeralRange(good)).toEqual({ low: 32768, high: 60999 });
      const bad = path.join(dir, 'bad');
      fs.writeFileSync(bad, 'sixty\n');
      expect(ephemeralRange(bad)).toBeUndefined();
      expect(ephemeralRange(path.join(dir, 'missing'))).toBeUndefined();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
