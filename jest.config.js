/** Two projects: `unit` (no network, seconds) and `integration` (a real Kafka broker and Redis). */
const transform = { '^.+\\.ts$': 'ts-jest' }; // transpile only: tsconfig sets isolatedModules
// Not under the temporary folder: `npm test` gives each run its own (scripts/test.ts).
const cacheDirectory = '<rootDir>/node_modules/.cache/jest';
module.exports = {
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      transform,
      cacheDirectory,
      testMatch: ['<rootDir>/test/unit/**/*.test.ts'],
    },
    {
      displayName: 'integration',
      // Node's, plus a last kill of any process group a test started (test/helpers/processes.ts).
      testEnvironment: '<rootDir>/test/helpers/process-owning-environment.ts',
      transform,
      cacheDirectory,
      testMatch: ['<rootDir>/test/integration/**/*.test.ts'],
      globalSetup: '<rootDir>/test/helpers/global-setup.ts',
      setupFilesAfterEnv: ['<rootDir>/test/helpers/integration-timeout.ts'],
    },
  ],
};
