/**
 * Before a phase that measures latency: the machine as the phase before it left it is not at
 * rest. A throughput phase writes gigabytes the kernel is still flushing to disk minutes later,
 * and its topics are still on the broker; in the run of 2026-12-06 06:41 the first two latency
 * rounds had both sides 1.3–4.6 s behind and the last two neither. So the topics are deleted,
 * the page cache flushed (`sync`), and the phase waits until the CPUs are mostly idle. (Waiting
 * out the minute after which the broker removes the deleted topics' files too changed nothing:
 * in the run of 08:06 with it, the rounds that fell behind were the later ones.)
 */
import { execFileSync } from 'node:child_process';
import os from 'node:os';

const busyShare = (a: os.CpuInfo[], b: os.CpuInfo[]): number => {
  let busy = 0;
  let total = 0;
  b.forEach((cpu, i) => {
    const before = a[i].times;
    const { idle, ...rest } = cpu.times;
    const spent = Object.values(rest).reduce((n, t) => n + t, 0) - (before.user + before.nice + before.sys + before.irq);
    busy += spent;
    total += spent + idle - before.idle;
  });
  return total > 0 ? busy / total : 0;
};

/** Flushes the page cache, then waits until the CPUs were busy less than `busy` of a `windowMs` window, at most `maxMs`; returns the last share and the wait. */
export const untilQuiet = async ({ busy = 0.25, windowMs = 2000, maxMs = 90_000 } = {}): Promise<{ busy: number; waitedMs: number }> => {
  const start = Date.now();
  execFileSync('sync');
  for (;;) {
    const before = os.cpus();
    await new Promise((resolve) => setTimeout(resolve, windowMs));
    const share = busyShare(before, os.cpus());
    if (share < busy || Date.now() - start >= maxMs) return { busy: share, waitedMs: Date.now() - start };
  }
};
