import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, TEST_ADMIN, type TestApp } from './helpers.js';

/**
 * What a client developer does: generate types from the document with openapi-typescript, write a
 * program against them with openapi-fetch, compile it strictly and run it against a listening app.
 * The `@ts-expect-error` lines fail the compile if the types were too loose to catch a mistake.
 */
const PROGRAM = `
import createClient from 'openapi-fetch';
import type { components, paths } from './api.js';

export async function run(baseUrl: string, identifier: string, password: string) {
  const client = createClient<paths>({ baseUrl });
  const signIn = await client.POST('/v1/auth/login', { body: { identifier, password } });
  if (!signIn.data) throw new Error('login failed: ' + JSON.stringify(signIn.error));
  const headers = { Authorization: 'Bearer ' + signIn.data.session_token };
  const created = await client.POST('/v1/gps', {
    headers,
    body: { latitude: 53.5511, longitude: 9.9937, timestamp: 1767225600, speed_kmh: 36, speed_mps: 10, speed_mph: 22.37, speed_knots: 19.44 },
  });
  const point: components['schemas']['GpsPoint'] | undefined = created.data?.data;
  const trips = await client.GET('/v1/trips', { headers, params: { query: { limit: 5 } } });
  const names: string[] = trips.data?.data.map((trip) => trip.name) ?? [];
  return { status: [signIn.response.status, created.response.status, trips.response.status], latitude: point?.latitude, names, total: trips.data?.pagination.total };
}

export async function mistakes(client: ReturnType<typeof createClient<paths>>) {
  // @ts-expect-error latitude is a number
  await client.POST('/v1/gps', { body: { latitude: 'north', longitude: 9, timestamp: 1, speed_kmh: 0, speed_mps: 0, speed_mph: 0, speed_knots: 0 } });
  // @ts-expect-error no such query parameter
  await client.GET('/v1/trips', { params: { query: { sort: 'name' } } });
}
`;

describe('a typed client generated from the OpenAPI document', () => {
  let t: TestApp;
  let dir: string;
  beforeAll(async () => {
    t = await buildTestApp();
    // Inside the project, so the program resolves openapi-fetch from its node_modules.
    mkdirSync(resolve('node_modules/.cache'), { recursive: true });
    dir = mkdtempSync(resolve('node_modules/.cache/waygate-openapi-client-'));
  });
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await t.close();
  });

  it('compiles a program calling three routes with correct types, and the program works', async () => {
    const document = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
    writeFileSync(join(dir, 'api.d.ts'), astToString(await openapiTS(document)));
    writeFileSync(join(dir, 'client.ts'), PROGRAM);
    writeFileSync(join(dir, 'package.json'), '{ "type": "module" }');

    const options: ts.CompilerOptions = {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      skipLibCheck: true,
      types: [],
      lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
    };
    const program = ts.createProgram([join(dir, 'client.ts')], options);
    const diagnostics = ts
      .getPreEmitDiagnostics(program)
      .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    expect(diagnostics).toEqual([]);

    writeFileSync(
      join(dir, 'client.js'),
      ts.transpileModule(PROGRAM, { compilerOptions: { module: ts.ModuleKind.ES2022, target: ts.ScriptTarget.ES2022 } })
        .outputText,
    );
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const client = (await import(pathToFileURL(join(dir, 'client.js')).href)) as {
      run: (...args: string[]) => Promise<unknown>;
    };
    expect(await client.run(address, TEST_ADMIN.username, TEST_ADMIN.password)).toEqual({
      status: [200, 201, 200],
      latitude: 53.5511,
      names: [],
      total: 0,
    });
  }, 60_000);
});
