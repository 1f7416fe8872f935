/**
 * The integration project's test environment: Node's, plus a last line of defence for the
 * processes tests start (test/helpers/owned-processes.ts, which test/helpers/processes.ts
 * re-exports with its per-test hooks, records their process groups here). When a
 * test file's environment is torn down, or the Jest worker exits while a test still runs,
 * every group still recorded is SIGKILLed. The tests' own hooks normally leave nothing to do.
 */
import type { EnvironmentContext, JestEnvironmentConfig } from '@jest/environment';
import NodeEnvironment from 'jest-environment-node';

export default class ProcessOwningEnvironment extends NodeEnvironment {
  private readonly groups = new Set<number>();

  private readonly killGroups = (): void => {
    for (const pid of this.groups) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // the group is gone already
      }
    }
    this.groups.clear();
  };

  constructor(config: JestEnvironmentConfig, context: EnvironmentContext) {
    super(config, context);
    this.global.__sluiceOwnedGroups = this.groups;
    process.on('exit', this.killGroups);
  }

  async teardown(): Promise<void> {
    this.killGroups();
    process.off('exit', this.killGroups);
    await super.teardown();
  }
}
