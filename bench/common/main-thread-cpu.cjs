/**
 * The main thread's user + system CPU in µs on Linux (/proc, clock ticks of 10 ms; the rest of a
 * process's CPU is V8's helper threads: the optimizing compiler, concurrent and parallel garbage
 * collection), else undefined. For the bench's probe (./probe.cjs) and bench/micro/path.ts.
 */
const { readFileSync } = require('node:fs');

const mainThreadMicros = () => {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10_000; // utime + stime, at USER_HZ = 100
  } catch {
    return undefined;
  }
};

module.exports = { mainThreadMicros };
