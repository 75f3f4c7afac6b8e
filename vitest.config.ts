import { defineConfig } from 'vitest/config';

/**
 * Every test file runs once on the embedded back ends (PGlite + in-process
 * store) and, when TEST_DATABASE_URL / TEST_REDIS_URL are set (as .ci/run
 * does), once more on PostgreSQL + Redis.
 */
const external = Boolean(process.env.TEST_DATABASE_URL || process.env.TEST_REDIS_URL);

/**
 * In CI (or with TEST_SEED) files and the tests in them run in a random order, so a test that leans on
 * another's leftovers fails; the seed is printed so the order can be replayed.
 */
const shuffle = Boolean(process.env.CI || process.env.TEST_SEED);
const seed = Number(process.env.TEST_SEED) || Math.floor(Math.random() * 1_000_000);
if (shuffle && !process.env.VITEST_WORKER_ID && !(globalThis as { seedShown?: boolean }).seedShown) {
  (globalThis as { seedShown?: boolean }).seedShown = true;
  console.log(`Test order shuffled with seed ${seed}; replay it with TEST_SEED=${seed} npm test`);
}

export default defineConfig({
  // graphql ships CommonJS and ESM builds; Node (and mercurius, which requires it) load the CommonJS one,
  // so the tests must too: two copies of graphql refuse each other's schema types.
  resolve: { alias: { graphql: 'graphql/index.js' } },
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    setupFiles: ['test/setup.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    sequence: shuffle ? { shuffle: { files: true, tests: true }, seed } : {},
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
