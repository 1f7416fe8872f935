/**
 * Preloaded (`node -r`) into each benchmarked process (the sidecar and the plain pipe): answers
 * the harness over the IPC channel with this process's CPU time and, after a full gc
 * (--expose-gc), its heap. It adds nothing to the hot path and never keeps the process alive.
 */
if (process.send) {
  process.on('message', (message) => {
    if (!message || message.probe !== 'usage') return;
    if (message.gc && typeof globalThis.gc === 'function') {
      globalThis.gc();
      globalThis.gc();
    }
    const memory = process.memoryUsage();
    process.send({ probe: 'usage', id: message.id, cpu: process.cpuUsage(), heapUsed: memory.heapUsed, rss: memory.rss });
  });
  if (process.channel) process.channel.unref();
}
