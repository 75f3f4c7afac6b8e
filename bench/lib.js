// Helpers shared by the bench scripts.
import { createServer } from 'node:net';
import { join } from 'node:path';

export const ROOT = join(import.meta.dirname, '..');
export const BASELINE = { args: [join(ROOT, 'bench', 'baseline.js')], readyPath: '/hello', request: { method: 'GET', path: '/hello' } };

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

/** Resolves once `url` answers 2xx; rejects when the child exits first or after `seconds`. */
export async function waitUntilReady(name, child, url, seconds) {
  for (let i = 0; i < seconds * 10; i++) {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  throw new Error(`${name} did not start within ${seconds} s`);
}

export function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
