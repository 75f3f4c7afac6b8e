import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { finishDocument } from '../src/platform/http/openapi-document.js';
import { buildTestApp, type TestApp } from './helpers.js';

const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

interface Operation {
  operationId?: string;
  security?: Record<string, string[]>[];
  parameters?: { name: string; in: string; required?: boolean }[];
  requestBody?: { content: Record<string, { schema: object; example?: unknown }> };
  responses: Record<string, { description: string }>;
}
interface Document {
  servers: { url: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, object> };
}

/** Operations that answer no 2xx by nature (redocly.yaml turns its rule off for them). */
const WITHOUT_2XX = new Set([
  'signIn',
  'validateToken', // the spec's 501 stubs
  'authorize',
  'authorizeByForm',
  'resumeAuthorization',
  'consentOAuthInteraction',
  'completeOAuthSignInHandoff',
  'completeIntegrationConnect', // redirects
  'openWebSocket', // 101
]);

describe('the OpenAPI document a client generator reads', () => {
  let t: TestApp;
  let document: Document;
  let operations: [string, Operation][];
  beforeAll(async () => {
    t = await buildTestApp({ config: { publicUrl: 'https://waygate.example.org' } });
    document = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
    operations = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(
        ([method, operation]) => [`${method.toUpperCase()} ${path}`, operation] as [string, Operation],
      ),
    );
  });
  afterAll(() => t.close());

  it('passes redocly lint with the recommended rules: no error, no warning', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'waygate-openapi-'));
    try {
      const file = join(dir, 'openapi.json');
      writeFileSync(file, JSON.stringify(document));
      const run = await promisify(execFile)(
        'node_modules/.bin/redocly',
        ['lint', file, '--config', 'redocly.yaml', '--format', 'json'],
        { maxBuffer: 64 << 20 },
      ).catch((failed: { stdout: string }) => failed);
      const { problems } = JSON.parse(run.stdout) as {
        problems: { ruleId: string; message: string; location: { pointer: string }[] }[];
      };
      expect(problems.map((p) => `${p.ruleId}: ${p.message} (${p.location[0]?.pointer})`)).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);

  it('names every operation with a unique camelCase operationId', () => {
    const ids = operations.map(([, operation]) => operation.operationId);
    expect(ids.filter((id) => !/^[a-z][A-Za-z0-9]+$/.test(id ?? ''))).toEqual([]);
    expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
    const idOf = (key: string) => operations.find(([name]) => name === key)?.[1].operationId;
    expect(
      [
        'GET /v1/trips',
        'POST /v1/gps',
        'GET /v1/trips/{id}',
        'PATCH /v1/trips/{id}',
        'DELETE /v1/trips/{id}',
        'POST /v1/auth/login',
      ].map(idOf),
    ).toEqual(['listTrips', 'createGpsPoint', 'getTrip', 'updateTrip', 'deleteTrip', 'login']);
  });

  it('states the security of every operation: none on public ones, a bearer credential on guarded ones', () => {
    expect(operations.filter(([, operation]) => !operation.security).map(([name]) => name)).toEqual([]);
    expect(document.paths['/v1/auth/login']!.post!.security).toEqual([]);
    expect(document.paths['/v1/trips']!.get!.security).toEqual([{ bearer: [] }]);
    // (An empty requirement makes the credential optional: GraphQL answers its refusals inside a 200.)
    const guarded = operations.filter(
      ([, operation]) =>
        operation.security?.length && !operation.security.some((requirement) => !Object.keys(requirement).length),
    );
    expect(guarded.filter(([, operation]) => !operation.responses['401']).map(([name]) => name)).toEqual([]);
  });

  it('describes every response, with a 2xx on every operation that can succeed and the error body on every 4xx', () => {
    const gaps = operations.flatMap(([name, operation]) => [
      ...Object.entries(operation.responses)
        .filter(([, response]) => !response.description || response.description === 'Default Response')
        .map(([status]) => `${name} ${status}`),
      ...(WITHOUT_2XX.has(operation.operationId!) ||
      Object.keys(operation.responses).some((status) => status.startsWith('2'))
        ? []
        : [`${name}: no 2xx`]),
    ]);
    expect(gaps).toEqual([]);
    expect(document.paths['/v1/trips/{id}']!.get!.responses).toMatchObject({
      200: { description: 'OK' },
      404: {
        description: 'Not found: `trip.not_found`',
        content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' } } },
      },
      429: { description: 'Too many requests: `request.rate_limited`' },
    });
  });

  it('names the resources as component schemas and refers to them', () => {
    expect(Object.keys(document.components.schemas)).toEqual(
      expect.arrayContaining([
        'Trip',
        'Device',
        'GpsPoint',
        'User',
        'Role',
        'Permission',
        'ApiKey',
        'Location',
        'Geofence',
        'Session',
        'AuditEvent',
        'SignIn',
      ]),
    );
    expect(JSON.stringify(document.paths['/v1/trips']!.get!.responses['200'])).toContain(
      '"$ref":"#/components/schemas/Trip"',
    );
  });

  it('gives every request body, JSON or form, an example that its schema accepts', () => {
    const ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(ajv);
    const bodies = operations.flatMap(([name, operation]) =>
      Object.entries(operation.requestBody?.content ?? {}).map(([type, media]) => ({ name: `${name} ${type}`, media })),
    );
    expect(bodies.length).toBeGreaterThan(80);
    const problems = bodies.flatMap(({ name, media }) => {
      if (media.example === undefined) return [`${name}: no example`];
      const validate = ajv.compile({ ...media.schema, components: document.components });
      return validate(media.example) ? [] : [`${name}: ${ajv.errorsText(validate.errors)}`];
    });
    expect(problems).toEqual([]);
  });

  it('marks query parameters with a default as optional', () => {
    const query = document.paths['/v1/trips']!.get!.parameters!.filter((parameter) => parameter.in === 'query');
    expect(query.map((parameter) => [parameter.name, parameter.required ?? false])).toEqual([
      ['page', false],
      ['limit', false],
      ['status', false],
    ]);
  });

  it('lists PUBLIC_URL as the server, or the server the document was read from', () => {
    expect(document.servers).toEqual([{ url: 'https://waygate.example.org' }]);
    expect(finishDocument({ paths: {} }, undefined).servers).toEqual([
      { url: '/', description: 'The server this document was read from' },
    ]);
  });
});
