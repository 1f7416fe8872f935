/**
 * Preloaded (`node -r`) into each benchmarked process (the sidecar and the plain pipe): answers
 * the harness over the IPC channel with this process's CPU time — and, on Linux, that of its
 * main thread alone (the rest is V8's helper threads: the optimizing compiler, concurrent and
 * parallel garbage collection) — and, after a full gc (--expose-gc), its heap. It adds nothing
 * to the hot path, never keeps the process alive, and ends it when the harness goes away.
 */
const { mainThreadMicros } = require('./main-thread-cpu.cjs');

if (process.send) {
  process.on('message', (message) => {
    if (!message || message.probe !== 'usage') return;
    if (message.gc && typeof globalThis.gc === 'function') {
      globalThis.gc();
      globalThis.gc();
    }
    const memory = process.memoryUsage();
    process.send({ probe: 'usage', id: message.id, cpu: process.cpuUsage(), mainCpuMicros: mainThreadMicros(), heapUsed: memory.heapUsed, rss: memory.rss });
  });
  // A harness that died must not leave a side running: the IPC channel closing ends it.
  process.on('disconnect', () => process.exit(0));
  if (process.channel) process.channel.unref();
}
