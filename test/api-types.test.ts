import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from './helpers.js';

/**
 * The console and the HTTP tests are typed by `console/js/types/api.d.ts`, generated from the OpenAPI document with
 * openapi-typescript. This test generates it again and fails when the committed file differs (a route or schema
 * changed without it); `npx vitest run test/api-types.test.ts -u` writes the new one.
 */
describe('the generated API types', () => {
  let t: TestApp;
  beforeAll(async () => (t = await buildTestApp()));
  afterAll(() => t.close());

  it('match the OpenAPI document', async () => {
    const document = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
    const types = astToString(await openapiTS(document, { rootTypes: false }));
    const header = '// Generated from /v1/openapi.json by test/api-types.test.ts (openapi-typescript); do not edit.\n';
    await expect(header + types).toMatchFileSnapshot('../console/js/types/api.d.ts');
  });
});
