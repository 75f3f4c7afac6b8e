import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, buildTestApp, freePort, login, type TestApp } from './helpers.js';

const README = readFileSync(join(import.meta.dirname, '..', 'README.md'), 'utf8');
/** The start command of the walkthrough: its BOOTSTRAP_ADMIN_* settings are the server's. */
const START = /```sh\n(BOOTSTRAP_ADMIN_\S+ BOOTSTRAP_ADMIN_\S+ BOOTSTRAP_ADMIN_\S+ npm start)\n```/.exec(README)?.[1];
const WALKTHROUGH = /```sh walkthrough\n([\s\S]*?)```/.exec(README)?.[1];
const BASE_LINE = 'WAYGATE=http://localhost:8080';

let t: TestApp;
let base: string;
let settings: Record<string, string>;

beforeAll(async () => {
  if (!START || !WALKTHROUGH)
    throw new Error('README.md has no walkthrough (a ```sh block starting the server, then a ```sh walkthrough block)');
  settings = Object.fromEntries([...START.matchAll(/(BOOTSTRAP_ADMIN_\w+)=(\S+)/g)].map((m) => [m[1]!, m[2]!]));
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  t = await buildTestApp({
    config: {
      bootstrapAdmin: {
        email: settings.BOOTSTRAP_ADMIN_EMAIL!,
        username: settings.BOOTSTRAP_ADMIN_USERNAME!,
        password: settings.BOOTSTRAP_ADMIN_PASSWORD!,
      },
    },
  });
  await t.app.listen({ host: '127.0.0.1', port });
});
afterAll(() => t?.close());

describe('the README walkthrough', () => {
  it('runs as written, in a real shell with curl, from signing in to reading the first point back', async () => {
    // Only the base URL changes: the line that sets it, nothing else.
    expect(WALKTHROUGH!.split('\n').filter((line) => line === BASE_LINE)).toHaveLength(1);
    const script = WALKTHROUGH!.replace(BASE_LINE, `WAYGATE=${base}`);
    // (Asynchronously: the server answers from this very process.)
    const result = await new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
      const env = {
        PATH: `${dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`,
        HOME: process.env.HOME ?? '/tmp',
      };
      execFile('bash', ['-e', '-o', 'pipefail', '-c', script], { env, timeout: 60_000 }, (error, stdout, stderr) =>
        resolve({ status: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr }),
      );
    });
    expect({ status: result.status, stderr: result.stderr }).toEqual({ status: 0, stderr: '' });

    const [posted, current, ...rest] = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { data: Record<string, unknown>; _links: { self: string } });
    expect(rest).toEqual([]);
    expect(posted!.data).toMatchObject({ latitude: 53.5461, longitude: 9.9661, speed_kmh: 5.4, trip_id: null });
    expect(posted!._links.self).toBe(`${base}/v1/gps/${posted!.data.id}`);
    expect(current!.data).toEqual(posted!.data);

    // The key it made holds exactly what the walkthrough says, and the admin sees the point too.
    const admin = await login(t.app, settings.BOOTSTRAP_ADMIN_USERNAME!, settings.BOOTSTRAP_ADMIN_PASSWORD!);
    const keys = (await t.app.inject({ url: '/v1/api-keys', headers: bearer(admin) })).json().data as {
      name: string;
      scopes: string[];
    }[];
    expect(keys.filter((key) => key.name === 'my phone').map((key) => key.scopes)).toEqual([['gps:write', 'gps:read']]);
    expect((await t.app.inject({ url: `/v1/gps/${posted!.data.id}`, headers: bearer(admin) })).statusCode).toBe(200);
  });
});
