import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from './helpers.js';

/**
 * The client generators users point at the document, each run as its command line and its output
 * compiled strictly by tsc: openapi-typescript, @hey-api/openapi-ts and orval (the last releases that
 * run on Node 20). A range key such as `2XX` or a schema a generator cannot type fails here.
 */
const run = promisify(execFile);
const bin = (name: string) => resolve('node_modules/.bin', name);

const TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    module: 'ESNext',
    moduleResolution: 'Bundler',
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    lib: ['ES2022', 'DOM', 'DOM.Iterable'],
    types: [],
  },
  include: ['**/*.ts'],
};

describe('clients generated from the OpenAPI document compile', () => {
  let t: TestApp;
  let dir: string;
  let document: string;
  beforeAll(async () => {
    t = await buildTestApp({ config: { publicUrl: 'https://waygate.example.org' } });
    document = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).body;
    // Inside the project, so generated code resolves its runtime packages from node_modules.
    mkdirSync(resolve('node_modules/.cache'), { recursive: true });
    dir = mkdtempSync(resolve('node_modules/.cache/waygate-generators-'));
    writeFileSync(join(dir, 'openapi.json'), document);
  });
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await t.close();
  });

  /** Generates into its own folder, then type-checks that folder alone. */
  async function generateAndCompile(name: string, command: string, args: string[]): Promise<void> {
    const out = join(dir, name);
    mkdirSync(out, { recursive: true });
    await run(command, args, { cwd: dir, maxBuffer: 64 << 20 });
    writeFileSync(join(out, 'tsconfig.json'), JSON.stringify(TSCONFIG));
    const compiled = await run(bin('tsc'), ['-p', join(out, 'tsconfig.json')], { maxBuffer: 64 << 20 }).catch(
      (failed: { stdout: string }) => failed,
    );
    expect(compiled.stdout).toBe('');
  }

  it('documents statuses, never a range key (orval cannot type `2XX`)', () => {
    const paths = (
      JSON.parse(document) as { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> }
    ).paths;
    const ranges = Object.entries(paths).flatMap(([path, methods]) =>
      Object.entries(methods).flatMap(([method, operation]) =>
        Object.keys(operation.responses)
          .filter((status) => !/^\d{3}$/.test(status))
          .map((status) => `${method} ${path} ${status}`),
      ),
    );
    expect(ranges).toEqual([]);
    expect(Object.keys(paths['/v1/gql']!.post!.responses)).toContain('200');
  });

  it('openapi-typescript', async () => {
    await generateAndCompile('openapi-typescript', bin('openapi-typescript'), [
      'openapi.json',
      '-o',
      'openapi-typescript/api.ts',
    ]);
  }, 120_000);

  it('@hey-api/openapi-ts with its fetch client', async () => {
    await generateAndCompile('hey-api', bin('openapi-ts'), [
      '-i',
      'openapi.json',
      '-o',
      'hey-api',
      '-c',
      '@hey-api/client-fetch',
    ]);
  }, 120_000);

  it('orval with its fetch client', async () => {
    await generateAndCompile('orval', bin('orval'), [
      '--input',
      'openapi.json',
      '--output',
      'orval/api.ts',
      '--client',
      'fetch',
    ]);
  }, 120_000);
});
