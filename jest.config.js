/** Two projects: `unit` (no network, seconds) and `integration` (a real Kafka broker and Redis). */
const transform = { '^.+\\.ts$': 'ts-jest' }; // transpile only: tsconfig sets isolatedModules
module.exports = {
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      transform,
      testMatch: ['<rootDir>/test/unit/**/*.test.ts'],
    },
    {
      displayName: 'integration',
      // Node's, plus a last kill of any process group a test started (test/helpers/processes.ts).
      testEnvironment: '<rootDir>/test/helpers/process-owning-environment.ts',
      transform,
      testMatch: ['<rootDir>/test/integration/**/*.test.ts'],
      globalSetup: '<rootDir>/test/helpers/global-setup.ts',
      setupFilesAfterEnv: ['<rootDir>/test/helpers/integration-timeout.ts'],
    },
  ],
};
