/** Integration tests need a real broker and Redis: their addresses come from the environment. */
export default async function globalSetup(): Promise<void> {
  const missing = ['SLUICE_KAFKA_BROKERS', 'SLUICE_REDIS_URL'].filter((name) => !process.env[name]);
  if (missing.length > 0) {
    throw new Error(`integration tests need ${missing.join(' and ')}: run them with \`npm test\`, or export the lines \`npm run services -- up\` prints`);
  }
}
