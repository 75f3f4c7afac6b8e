import { defineConfig } from 'vitest/config';

/**
 * Every test file runs once on the embedded back ends (PGlite + in-process
 * store) and, when TEST_DATABASE_URL / TEST_REDIS_URL are set (as .ci/run
 * does), once more on PostgreSQL + Redis.
 */
const external = Boolean(process.env.TEST_DATABASE_URL || process.env.TEST_REDIS_URL);

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: process.env.CI ? ['default', 'json'] : ['default'],
    outputFile: { json: 'test-results.json' },
    projects: [
      { extends: true as const, test: { name: 'embedded', env: { WAYGATE_TEST_BACKEND: 'embedded' } } },
      ...(external
        ? [{ extends: true as const, test: { name: 'postgres+redis', env: { WAYGATE_TEST_BACKEND: 'external' } } }]
        : []),
    ],
  },
});
