import { execFile, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backend } from './helpers.js';
import { cleanEnv, waitFor } from './processes.js';

const ROOT = join(import.meta.dirname, '..');
/** What the Dockerfile's runtime stage holds besides node_modules (dist/ comes from the build stage). */
const SHIPPED = ['package.json', 'package-lock.json', 'migrations', 'scripts', 'dist', 'console'];

/** A shell's environment for npm: none of the npm_* settings of the npm that runs this suite. */
function npmEnv(extra: Record<string, string> = {}): Record<string, string> {
  return { ...Object.fromEntries(Object.entries(cleanEnv()).filter(([name]) => !/^npm_/i.test(name))), ...extra };
}

const npm = (cwd: string, args: string[]) =>
  promisify(execFile)('npm', args, { cwd, env: npmEnv(), timeout: 150_000 }).then(
    ({ stdout, stderr }) => ({ status: 0, output: stdout + stderr }),
    (err: { code?: number; stdout?: string; stderr?: string }) => ({
      status: err.code ?? 1,
      output: `${err.stdout}${err.stderr}`,
    }),
  );

// The production install as the README describes it, simulated without Docker: the shipped files in a
// fresh folder, `npm ci --omit=dev` (no TypeScript), `npm start`. Most of its time goes to npm and the
// first start creating its database: too much CPU to run beside the parallel suite, so `npm run check:production` runs it (PRODUCTION_CHECK=1), as `.ci/run` does after `npm test`.
describe.runIf(backend === 'embedded' && process.env.PRODUCTION_CHECK === '1')('production install', () => {
  let app: string;
  let install: { status: number; output: string };
  beforeAll(async () => {
    if (!existsSync(join(ROOT, 'dist', 'main.js')))
      throw new Error('dist/main.js is missing: npm test builds it first');
    app = mkdtempSync(join(tmpdir(), 'waygate-production-'));
    for (const name of SHIPPED) cpSync(join(ROOT, name), join(app, name), { recursive: true });
    install = await npm(app, ['ci', '--omit=dev', '--prefer-offline', '--no-audit', '--no-fund']);
  }, 180_000);
  afterAll(() => rmSync(app, { recursive: true, force: true }));

  it('npm ci --omit=dev installs no compiler and says why it builds nothing', () => {
    expect(install.status).toBe(0);
    expect(install.output).toContain(
      'waygate: TypeScript is not installed (npm ci --omit=dev), so dist/ is not built here; copy it from a build stage',
    );
    expect(existsSync(join(app, 'node_modules', 'typescript'))).toBe(false);
    expect(existsSync(join(app, 'node_modules', 'fastify'))).toBe(true);
  });

  it('npm start serves the shipped dist/ and hands SIGTERM to the server', { timeout: 120_000 }, async () => {
    expect(install.status).toBe(0);
    const dataDir = mkdtempSync(join(tmpdir(), 'waygate-production-data-'));
    const server = spawn('npm', ['start'], {
      cwd: app,
      env: npmEnv({ DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1' }),
    });
    let output = '';
    server.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    server.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => server.on('exit', resolve));
    try {
      const address = await waitFor(() => /"address":"(http:[^"]+)"/.exec(output)?.[1], 100_000);
      const health = await fetch(`${address}/v1/health`);
      expect(health.status).toBe(200);
      expect(await health.json()).toMatchObject({
        status: 'healthy',
        services: { database: { status: 'up' }, cache: { status: 'up' } },
      });
      // The web console's files and Leaflet (a production dependency) are there.
      const page = await (await fetch(`${address}/console/`)).text();
      const leaflet = /href="(\/console\/assets\/[0-9a-f]+\/vendor\/leaflet\/leaflet\.css)"/.exec(page)?.[1];
      expect((await fetch(`${address}${leaflet}`)).status).toBe(200);
      // npm execs node, so the server is npm's direct child and the signal a process manager sends reaches it.
      const serverPid = Number(/"pid":(\d+)/.exec(output)?.[1]);
      process.kill(serverPid, 'SIGTERM');
      expect(await exited).toBe(0);
      expect(output).toContain('"msg":"stopped"');
      expect(output).not.toContain('building it');
    } finally {
      server.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

// The start-time build check on its own: no install needed, as no compiler is found either way.
describe.runIf(backend === 'embedded')('npm start without a compiler', () => {
  let app: string;
  beforeAll(() => {
    app = mkdtempSync(join(tmpdir(), 'waygate-stale-'));
    for (const name of ['package.json', 'scripts']) cpSync(join(ROOT, name), join(app, name), { recursive: true });
  });
  afterAll(() => rmSync(app, { recursive: true, force: true }));

  it('refuses to run without dist/, saying how to get one', async () => {
    const result = await npm(app, ['start']);
    expect(result.status).not.toBe(0);
    expect(result.output).toContain(
      'waygate: dist/ is missing and TypeScript is not installed: run "npm run build" where dev dependencies are (npm ci), or copy dist/ from a build stage',
    );
  });

  it('refuses to run a dist/ older than src/ instead of serving stale code', async () => {
    const stale = mkdtempSync(join(app, 'copy-'));
    for (const name of ['package.json', 'scripts']) cpSync(join(app, name), join(stale, name), { recursive: true });
    mkdirSync(join(stale, 'dist'));
    writeFileSync(join(stale, 'dist', 'main.js'), 'console.log("stale code ran");\n');
    mkdirSync(join(stale, 'src'));
    // Written after dist/, as an edit or a pull after the last build.
    await new Promise((resolve) => setTimeout(resolve, 20));
    writeFileSync(join(stale, 'src', 'main.ts'), '// changed since the build\n');
    const result = await npm(stale, ['start']);
    expect(result.status).not.toBe(0);
    expect(result.output).toContain('waygate: dist/ is older than src/ and TypeScript is not installed');
    expect(result.output).not.toContain('stale code ran');
  });
});
