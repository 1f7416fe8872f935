// Integration tests wait on a real broker and Redis: give each test two minutes.
// (Jest 29 ignores `testTimeout` inside a `projects` entry.)
jest.setTimeout(120_000);
