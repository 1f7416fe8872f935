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
      testEnvironment: 'node',
      transform,
      testMatch: ['<rootDir>/test/integration/**/*.test.ts'],
      globalSetup: '<rootDir>/test/helpers/global-setup.ts',
      setupFilesAfterEnv: ['<rootDir>/test/helpers/integration-timeout.ts'],
    },
  ],
};
