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

/** A new, empty database in the PostgreSQL server of `adminUrl`: its URL, and how to drop it. */
export async function freshDatabase(adminUrl, name) {
  const pg = (await import('pg')).default;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  return {
    url: Object.assign(new URL(adminUrl), { pathname: `/${name}` }).toString(),
    drop: async () => {
      await admin.query(`drop database if exists ${name} with (force)`);
      await admin.end();
    },
  };
}

/** Deletes every key under `prefix` in the Redis at `url`; resolves to how many there were. */
export async function deleteRedisPrefix(url, prefix) {
  const { Redis } = await import('ioredis');
  const redis = new Redis(url);
  let deleted = 0;
  for (let cursor = '0'; ;) {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    if (keys.length) deleted += await redis.del(...keys);
    if ((cursor = next) === '0') break;
  }
  await redis.quit();
  return deleted;
}
