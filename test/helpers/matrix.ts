/**
 * The test matrix: `npm test` on a developer's machine runs one broker and the quick cases;
 * CI (the CI variable set, as .ci/run sets it; `CI=true npm test` by hand) runs every case of
 * the slow parameterized suites too. A suite lists its cases and marks which run everywhere.
 */
import { isCi } from '../../scripts/services/versions';

/** Whether this run is CI's: every case of every suite runs. */
export const fullMatrix = (): boolean => isCi() || process.env.SLUICE_TEST_FULL === '1';

/** The cases to run: all of them in CI, the `everywhere` ones otherwise (the others are named on stderr once). */
export const casesOf = <T>(suite: string, cases: readonly { everywhere: boolean; case: T }[]): T[] => {
  if (fullMatrix()) return cases.map((c) => c.case);
  const left = cases.filter((c) => !c.everywhere);
  if (left.length > 0) process.stderr.write(`[${suite}] ${left.length} of ${cases.length} cases run in CI only (CI=true or SLUICE_TEST_FULL=1 runs them here)\n`);
  return cases.filter((c) => c.everywhere).map((c) => c.case);
};
