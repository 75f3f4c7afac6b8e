/**
 * The dependency rules of ARCHITECTURE.md, checked by `npm run lint:deps` (part of `npm test`).
 * Contexts: src/identity, src/tracking, src/operations; each holds modules (one folder each).
 * A module's public entry is its service.ts, schemas.ts (the shapes it publishes), errors.ts (its error codes) or index.ts.
 * The console (console/js, plain ES modules the browser loads) is cruised too: no cycles (the shell, app.js, loads the
 * pages; what they share of the session is in session.js), and it reaches the service only over HTTP.
 */
const CONTEXTS = '(identity|tracking|operations)';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Modules and the platform form a graph without cycles; reactions go through events instead.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'platform-imports-no-module',
      severity: 'error',
      comment: 'The platform (db, kv, http, credentials, audit) serves every module and knows none of them.',
      from: { path: '^src/platform/' },
      to: { path: `^src/${CONTEXTS}/` },
    },
    {
      name: 'platform-imports-no-composition-root',
      severity: 'error',
      from: { path: '^src/(platform|identity|tracking|operations)/', pathNot: '\\.test\\.ts$' },
      to: { path: '^src/(app|services|reactions|jobs|main|server)\\.ts$' },
    },
    {
      name: 'module-through-public-entry',
      severity: 'error',
      comment: 'A module uses another only through its service.ts, schemas.ts, errors.ts or index.ts, never its repo, routes or helpers.',
      from: { path: `^src/${CONTEXTS}/([^/]+)/` },
      to: {
        path: `^src/${CONTEXTS}/[^/]+/`,
        pathNot: [`^src/$1/$2/`, `^src/${CONTEXTS}/[^/]+/(service|schemas|errors|index)\\.ts$`],
      },
    },
    {
      name: 'tracking-knows-no-identity',
      severity: 'error',
      comment: 'Tracking gets the caller through the platform credential port (platform/auth), never identity code.',
      from: { path: '^src/tracking/' },
      to: { path: '^src/identity/' },
    },
    {
      name: 'table-types-import-nothing',
      severity: 'error',
      comment: 'The table types are a leaf: Kysely types and each other only.',
      from: { path: '^src/platform/db/schema/' },
      to: { pathNot: ['^src/platform/db/schema/', 'kysely'] },
    },
    {
      name: 'console-pages-not-the-shell',
      severity: 'error',
      comment: 'The shell (console/js/app.js) loads every page; a page that imported it back would close a cycle. Session state is in session.js.',
      from: { path: '^console/js/', pathNot: '^console/js/app\\.js$' },
      to: { path: '^console/js/app\\.js$' },
    },
    {
      name: 'console-only-over-http',
      severity: 'error',
      comment: 'The console is what the browser loads; it uses the service through the public API, never its code.',
      from: { path: '^console/' },
      to: { path: '^(src|test|scripts|bench)/' },
    },
    {
      name: 'no-test-code-in-src',
      severity: 'error',
      from: { path: '^src/', pathNot: '\\.test\\.ts$' },
      to: { path: '(^test/|\\.test\\.ts$)' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
