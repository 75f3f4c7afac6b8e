// @ts-check
import tseslint from 'typescript-eslint';
import noAdjacentDocBlocks from './scripts/eslint/no-adjacent-doc-blocks.js';
import noLocalRequestHelper from './scripts/eslint/no-local-request-helper.js';

/**
 * Few rules, all errors (docs/development.md): what review keeps missing. Formatting is Prettier's (`npm run format`).
 * Reading the wall clock is the Clock's job (ARCHITECTURE.md: every rule about time reads the injected clock); the
 * files listed may read it for what is not a rule about time (timers, throughput, stamps nobody compares).
 */
const WALL_CLOCK_READERS = [
  'src/platform/clock.ts',
  // Expiry kept by the store: Redis counts TTLs on its own clock, and the in-process store mirrors it.
  'src/platform/kv/memory.ts',
  'src/platform/kv/redis.ts',
  // Windows of whole wall-clock seconds that every node shares through Redis (docs/api.md, Limits).
  'src/platform/rate-limit.ts',
  'src/platform/rate-limit-counter.ts',
  // The name of a mail's file in the outbox; how often a recurring failure is logged.
  'src/platform/mail/mailer.ts',
  'src/platform/log-throttle.ts',
];

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'console/js/types/**', 'console/vendor/**', 'coverage/**', '**/*.d.ts'] },
  {
    files: ['**/*.{ts,js,mjs}'],
    plugins: {
      waygate: {
        rules: { 'no-adjacent-doc-blocks': noAdjacentDocBlocks, 'no-local-request-helper': noLocalRequestHelper },
      },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      'waygate/no-adjacent-doc-blocks': 'error',
    },
  },
  {
    files: ['**/*.test.ts'],
    rules: { 'waygate/no-local-request-helper': 'error' },
  },
  {
    files: ['src/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts', 'vitest.config.ts'],
    extends: [tseslint.configs.base],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-shadow': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  {
    files: ['src/**/*.ts'],
    ignores: [...WALL_CLOCK_READERS, 'src/**/*.test.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.object.name='Date'][callee.property.name='now']",
          message: 'Read the injected Clock (deps.clock.nowMs()), not Date.now().',
        },
        {
          // A plain stamp (`updated_at`, `last_synced_at`) may (ARCHITECTURE.md): no rule compares it with now.
          selector:
            "NewExpression[callee.name='Date'][arguments.length=0]:not(Property[key.name=/_at$/] > NewExpression)",
          message: 'Read the injected Clock (deps.clock.now()), not new Date().',
        },
      ],
    },
  },
  {
    files: ['console/js/**/*.js', 'scripts/**/*.js', 'bench/**/*.js'],
    rules: { 'no-shadow': 'error' },
  },
);
