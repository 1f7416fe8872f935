/** The most of the sorted instants (ms) within any 1 s. */
export const busiestSecond = (sorted: readonly number[]): number => {
  let most = 0;
  for (let i = 0, j = 0; i < sorted.length; i += 1) {
    while (sorted[i] - sorted[j] >= 1000) j += 1;
    most = Math.max(most, i - j + 1);
  }
  return most;
};
