import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The console's static files, read once at start: the ES modules and styles of `console/` at the
 * package root (no front-end build) and Leaflet's distribution from node_modules, served under
 * `vendor/leaflet/` (Leaflet.markercluster's script under `vendor/leaflet.markercluster/`). One hash over
 * every file names the version: the assets live under `/console/assets/<version>/…`, so they can be
 * cached for good (`immutable`) and a new release, changing any file, changes every URL. Relative imports
 * between the modules keep working.
 */
export interface ConsoleAssets {
  version: string;
  index: string;
  files: Map<string, { body: Buffer; type: string; etag: string }>;
}

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json; charset=utf-8',
  '.webmanifest': 'application/manifest+json',
  '.html': 'text/html; charset=utf-8',
};

/** console/ at the package root: from src/operations/console (tests) and dist/operations/console (build) alike. */
export const CONSOLE_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'console');
const LEAFLET_DIST = join(dirname(createRequire(import.meta.url).resolve('leaflet/package.json')), 'dist');
// Leaflet.markercluster (MIT), the cluster layer of the live map: its script only; the console styles the clusters.
const MARKERCLUSTER_DIST = join(
  dirname(createRequire(import.meta.url).resolve('leaflet.markercluster/package.json')),
  'dist',
);
const LEAFLET_FILES = [
  'leaflet-src.esm.js',
  'leaflet.css',
  'images/layers.png',
  'images/layers-2x.png',
  'images/marker-icon.png',
  'images/marker-icon-2x.png',
  'images/marker-shadow.png',
];

function walk(root: string, dir = root): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const path = join(dir, name);
      return statSync(path).isDirectory() ? walk(root, path) : [relative(root, path).split(sep).join('/')];
    });
}

export function loadConsoleAssets(): ConsoleAssets {
  const sources: [string, string][] = [
    ...walk(CONSOLE_ROOT)
      .filter((path) => path !== 'index.html' && TYPES[extname(path)])
      .map((path): [string, string] => [path, join(CONSOLE_ROOT, path)]),
    ...LEAFLET_FILES.map((path): [string, string] => [`vendor/leaflet/${path}`, join(LEAFLET_DIST, path)]),
    [
      'vendor/leaflet.markercluster/leaflet.markercluster-src.js',
      join(MARKERCLUSTER_DIST, 'leaflet.markercluster-src.js'),
    ],
  ];
  const all = createHash('sha256');
  const files = new Map<string, { body: Buffer; type: string; etag: string }>();
  for (const [name, path] of sources) {
    const body = readFileSync(path);
    const digest = createHash('sha256').update(body).digest('base64url').slice(0, 16);
    all.update(name).update('\0').update(digest);
    files.set(name, { body, type: TYPES[extname(name)]!, etag: `"${digest}"` });
  }
  return {
    version: all.digest('hex').slice(0, 12),
    index: readFileSync(join(CONSOLE_ROOT, 'index.html'), 'utf8'),
    files,
  };
}
