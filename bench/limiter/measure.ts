/** Throughput measurement: `concurrency` workers call `step` in a loop for `durationMs`; decisions per second. */
export const measure = async (durationMs: number, concurrency: number, step: (worker: number, i: number) => Promise<number>): Promise<number> => {
  let decisions = 0;
  const started = process.hrtime.bigint();
  const deadline = Date.now() + durationMs;
  await Promise.all(
    Array.from({ length: concurrency }, async (_, worker) => {
      for (let i = 0; Date.now() < deadline; i += 1) {
        const decided = await step(worker, i); // not `decisions += await …`: that would read the sum before the await
        decisions += decided;
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return decisions / seconds;
};

export const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
