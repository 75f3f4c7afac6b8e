// Keeps dist/ (the compiled service) in step with src/ without compiling at every start.
//   node scripts/ensure-build.js            before npm start / migrate: builds only when dist/ is missing or
//                                           older than src/; without TypeScript (npm ci --omit=dev) says so and fails
//   node scripts/ensure-build.js --prepare  npm ci / npm install: builds; without TypeScript skips with a message,
//                                           since a production install gets dist/ from its build stage
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..');
const MAIN = join(ROOT, 'dist', 'main.js');
const SOURCES = ['src', 'tsconfig.json', 'tsconfig.build.json'].map((name) => join(ROOT, name));

/** The TypeScript compiler's entry, or undefined when dev dependencies are not installed. */
function compiler() {
  try {
    return createRequire(join(ROOT, 'package.json')).resolve('typescript/bin/tsc');
  } catch {
    return undefined;
  }
}

/** Newest modification time of the files that make up the build (0 when there are none, as in an image). */
function newestSource(path) {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return /\.test\.ts$/.test(path) ? 0 : stat.mtimeMs;
  return Math.max(0, ...readdirSync(path).map((name) => newestSource(join(path, name))));
}

function build(tsc) {
  const result = spawnSync(process.execPath, [tsc, '-p', join(ROOT, 'tsconfig.build.json')], { stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

function fail(message) {
  console.error(`waygate: ${message}`);
  process.exit(1);
}

const tsc = compiler();
if (process.argv.includes('--prepare')) {
  if (tsc) build(tsc);
  else
    console.error(
      'waygate: TypeScript is not installed (npm ci --omit=dev), so dist/ is not built here; copy it from a build stage',
    );
} else {
  const problem = !existsSync(MAIN)
    ? 'dist/ is missing'
    : Math.max(...SOURCES.map(newestSource)) > statSync(MAIN).mtimeMs
      ? 'dist/ is older than src/'
      : undefined;
  if (problem && !tsc)
    fail(
      `${problem} and TypeScript is not installed: run "npm run build" where dev dependencies are (npm ci), or copy dist/ from a build stage`,
    );
  if (problem) {
    console.error(`waygate: ${problem}; building it`);
    build(tsc);
  }
}
