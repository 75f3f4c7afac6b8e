import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

/**
 * Every test file runs once on the embedded back ends (PGlite + in-process
 * store) and, when TEST_DATABASE_URL / TEST_REDIS_URL are set (as .ci/run
 * does), once more on PostgreSQL + Redis.
 */
const external = Boolean(process.env.TEST_DATABASE_URL || process.env.TEST_REDIS_URL);
// Each project names its files: a project that extends the root would add its `include` to the root's.
const ALL_TESTS = ['src/**/*.test.ts', 'test/**/*.test.ts'];

/**
 * With both PostgreSQL and Redis, a third project runs the black-box HTTP tests on two nodes: every test app
 * is two apps on one database and store, each request landing on either (test/helpers.ts, buildTwoNodes).
 * Those are the files that build the test app; the others never see a node, so they would run the
 * postgres+redis project's tests once more. A test that depends on one node's memory skips itself there
 * (`twoNodes` in test/helpers.ts) and says why. Left to one node, to keep the pass near 10 minutes of CI
 * (it took 14 min with them under a load of 12): the pages in Chromium (they drive the API the other files test,
 * seconds a file), the fuzzer (broken input to every operation, which any node answers alike; 2 min) and
 * the client generators (code from the OpenAPI document, no node state).
 */
const twoNodes = Boolean(process.env.TEST_DATABASE_URL && process.env.TEST_REDIS_URL);
const ONE_NODE_ONLY = /\.browser\.test\.ts$|^test\/(fuzz|client-generators)\.test\.ts$/;
const testAppFiles = () =>
  ['src', 'test']
    .flatMap((dir) => readdirSync(dir, { recursive: true, encoding: 'utf8' }).map((file) => join(dir, file)))
    .filter(
      (file) =>
        file.endsWith('.test.ts') &&
        !ONE_NODE_ONLY.test(file) &&
        /\bbuild(Mailing)?TestApp\(/.test(readFileSync(file, 'utf8')),
    );

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
    globalSetup: ['test/global-setup.ts'],
    setupFiles: ['test/setup.ts'],
    pool: 'forks',
    // A worker runs its files one after another in one process, the modules imported once: each file builds its
    // own app, database and store anyway, and spies are restored. Isolating each file cost about a third of a
    // run in imports (docs/development.md); a shuffled CI order still catches a file leaning on another.
    isolate: false,
    testTimeout: 30_000,
    sequence: shuffle ? { shuffle: { files: true, tests: true }, seed } : {},
    hookTimeout: 60_000,
    reporters: process.env.CI ? ['default', 'json'] : ['default'],
    outputFile: { json: 'test-results.json' },
    projects: [
      {
        extends: true as const,
        test: { name: 'embedded', include: ALL_TESTS, env: { WAYGATE_TEST_BACKEND: 'embedded' } },
      },
      ...(external
        ? [
            {
              extends: true as const,
              test: { name: 'postgres+redis', include: ALL_TESTS, env: { WAYGATE_TEST_BACKEND: 'external' } },
            },
          ]
        : []),
      ...(twoNodes
        ? [
            {
              extends: true as const,
              test: { name: 'two-nodes', include: testAppFiles(), env: { WAYGATE_TEST_BACKEND: 'two-nodes' } },
            },
          ]
        : []),
    ],
  },
});
