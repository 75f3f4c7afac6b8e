import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, buildTestApp, createApiKey, login, TEST_ADMIN, testConfig, type TestApp } from './helpers.js';

/**
 * Requests generated from the OpenAPI document for every operation it lists (new routes are covered
 * without editing this file): path parameters, queries and bodies shaped after each schema and then
 * broken in the ways clients and attackers break them. Whatever arrives, the answer is never a 5xx,
 * and every 4xx is `{ error, message, code }` (OAuth's own endpoints answer RFC 6749 bodies instead).
 *
 * Seeded: the same requests every run unless FUZZ_SEED says otherwise (`random` for a new seed each run,
 * to explore; a number replays one). FUZZ_REQUESTS sets how many per operation (default 30, on each back
 * end, about 5,700 requests each). A fixed default keeps CI's verdict about the code, not about luck.
 */
const SEED =
  process.env.FUZZ_SEED === 'random'
    ? Math.floor(Math.random() * 2 ** 31)
    : Number(process.env.FUZZ_SEED) || 20_261_125;
const PER_OPERATION = Number(process.env.FUZZ_REQUESTS) || 30;

/** mulberry32: small, fast, and the same sequence for the same seed everywhere. */
function random(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  return { next, pick, chance: (p: number) => next() < p };
}
type Random = ReturnType<typeof random>;

interface Schema {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  enum?: unknown[];
  const?: unknown;
  anyOf?: Schema[];
  oneOf?: Schema[];
  format?: string;
  minimum?: number;
  maximum?: number;
}

const UUID = () =>
  '00000000-0000-4000-8000-' +
  Math.floor(Math.random() * 1e12)
    .toString(16)
    .padStart(12, '0');
const NASTY_STRINGS = [
  '',
  ' ',
  'a',
  '\u0000',
  'nul\u0000inside',
  'x'.repeat(5000),
  '漢字ä😀',
  '<script>alert(1)</script>',
  "' or 1=1 --",
  '../../etc/passwd',
  '%00',
  '\ud800',
  '1e400',
  'true',
  'null',
];
const NASTY_NUMBERS = [0, -1, 1, 0.5, -0.0001, 2 ** 31, 2 ** 53 + 1, 1e308, -1e308, 123456789012];

function stringFor(schema: Schema, r: Random): string {
  if (r.chance(0.5)) return r.pick(NASTY_STRINGS);
  switch (schema.format) {
    case 'uuid':
      return UUID();
    case 'email':
      return `fuzz${Math.floor(r.next() * 1e6)}@example.org`;
    case 'date-time':
      return r.pick(['2026-01-01T00:00:00Z', '2026-13-45T99:99:99Z', 'yesterday']);
    case 'uri':
      return r.pick(['https://example.org/cb', 'javascript:alert(1)', 'http://127.0.0.1:1/']);
    default:
      return r.pick(['fuzz', 'valid_name_1', 'gps:read', 'role_user', 'en', '1234567890123456789']);
  }
}

/** A value shaped after `schema`, often subtly or grossly wrong. */
function valueFor(schema: Schema | undefined, r: Random, depth = 0): unknown {
  if (!schema || depth > 4) return r.pick([null, 'x', 1, true, {}, []]);
  if (r.chance(0.08)) return r.pick([null, 'x', 1, true, {}, [], -1, '']);
  if (schema.const !== undefined) return schema.const;
  if (schema.enum) return r.chance(0.8) ? r.pick(schema.enum) : 'not_in_enum';
  const branches = schema.anyOf ?? schema.oneOf;
  if (branches) return valueFor(r.pick(branches), r, depth);
  const type = Array.isArray(schema.type) ? r.pick(schema.type) : schema.type;
  switch (type) {
    case 'string':
      return stringFor(schema, r);
    case 'integer':
    case 'number':
      return r.chance(0.6) && schema.minimum !== undefined ? schema.minimum : r.pick(NASTY_NUMBERS);
    case 'boolean':
      return r.chance(0.9) ? r.chance(0.5) : 'true';
    case 'null':
      return null;
    case 'array':
      return Array.from({ length: r.pick([0, 1, 2, 3]) }, () => valueFor(schema.items, r, depth + 1));
    case 'object':
    default: {
      const body: Record<string, unknown> = {};
      for (const [name, property] of Object.entries(schema.properties ?? {})) {
        const required = schema.required?.includes(name);
        if (r.chance(required ? 0.9 : 0.6)) body[name] = valueFor(property, r, depth + 1);
      }
      if (r.chance(0.1)) body.unexpected_field = 'extra';
      return body;
    }
  }
}

function pathFor(template: string, r: Random): string {
  return template.replace(/\{[^}]+\}/g, () =>
    encodeURIComponent(
      r.pick([
        UUID(),
        UUID(),
        'not-a-uuid',
        '1234567890123456789',
        'x'.repeat(120),
        '漢',
        '\u0000',
        'role_user',
        'email',
        '-1',
      ]),
    ),
  );
}

function queryFor(parameters: { in: string; name: string; schema?: Schema }[], r: Random): string {
  const query = new URLSearchParams();
  for (const parameter of parameters.filter((p) => p.in === 'query')) {
    if (r.chance(0.5)) query.set(parameter.name, String(valueFor(parameter.schema, r)));
  }
  if (r.chance(0.1)) query.set('limit', r.pick(['-5', '1000000', 'abc', '1e400']));
  const text = query.toString();
  return text ? `?${text}` : '';
}

interface Operation {
  method: string;
  path: string;
  parameters: { in: string; name: string; schema?: Schema }[];
  body?: Schema;
}

/** Tables a refused request may write by design: failures are audited, and failed sign-ins counted (kv_durable, without Redis). */
const WRITTEN_ON_FAILURE = new Set(['audit_events', 'kv_durable']);
/** The table a monthly partition (or a catch-all around them) belongs to, as migrations 0035 and 0038 name them. */
const tableOf = (name: string) => name.replace(/_(y\d{4}m\d{2}|before|after)$/, '');

/** The spec's stubs, which answer 501 by definition. */
const STUBS = new Set(['/v1/auth/signin', '/v1/auth/validate']);

/** Sign-outs and the like would take the fuzzer's own credentials away mid-run. */
const SPARED = new Set(['POST /v1/auth/logout', 'POST /v1/auth/logout-everywhere', 'DELETE /v1/users/me/sessions']);

describe(`fuzzing every operation of the OpenAPI document (seed ${SEED}; FUZZ_SEED=${SEED} replays it)`, () => {
  let t: TestApp;
  let operations: Operation[];
  let credentials: (Record<string, string> | undefined)[];
  beforeAll(async () => {
    t = await buildTestApp({
      config: { publicUrl: 'http://127.0.0.1', rateLimit: { ...testConfig().rateLimit, enabled: false } },
    });
    const admin = await login(t.app, 'admin', TEST_ADMIN.password);
    const key = (await createApiKey(t.app, admin, { name: 'fuzz', scopes: ['*:*'] })).key;
    credentials = [bearer(key), undefined, bearer('ses_not_a_session'), bearer(admin)];
    const document = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json() as {
      paths: Record<
        string,
        Record<
          string,
          { parameters?: Operation['parameters']; requestBody?: { content?: Record<string, { schema: Schema }> } }
        >
      >;
    };
    operations = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods)
        .filter(([method]) => ['get', 'post', 'put', 'patch', 'delete'].includes(method))
        .map(([method, operation]) => ({
          method: method.toUpperCase(),
          path,
          parameters: operation.parameters ?? [],
          body: operation.requestBody?.content?.['application/json']?.schema,
        })),
    );
  });
  afterAll(() => t.close());

  let tables: string[] | undefined;
  /** Rows per table, in one statement (a refused request must leave every one as it was). */
  async function rowCounts(): Promise<string> {
    tables ??= (await t.database.db.introspection.getTables())
      .map((table) => table.name)
      .filter((name) => !WRITTEN_ON_FAILURE.has(tableOf(name)))
      .sort();
    const counts = sql.join(tables.map((table) => sql`(select count(*) from ${sql.table(table)})`));
    const row = (await sql<Record<string, unknown>>`select array[${counts}] as counts`.execute(t.database.db)).rows[0]!;
    return tables!.map((table, i) => `${table}=${(row.counts as unknown[])[i]}`).join(' ');
  }

  it('answers every generated request without a 5xx, every 4xx in the error shape, and no refused request writes', async () => {
    const r = random(SEED);
    const failures: string[] = [];
    let sent = 0;
    let counts = await rowCounts();
    expect(counts).toMatch(/ users=\d+/);
    for (const operation of operations) {
      for (let i = 0; i < PER_OPERATION; i++) {
        const url = pathFor(operation.path, r) + queryFor(operation.parameters, r);
        if (SPARED.has(`${operation.method} ${operation.path}`)) continue;
        const headers: Record<string, string> = { ...(r.pick(credentials) ?? {}) };
        let payload: string | undefined;
        if (operation.method !== 'GET' && operation.method !== 'DELETE') {
          headers['content-type'] = r.chance(0.9)
            ? 'application/json'
            : r.pick(['text/plain', 'application/json; charset=latin1', 'application/x-www-form-urlencoded']);
          payload = r.chance(0.05) ? '{"broken": ' : JSON.stringify(valueFor(operation.body, r));
        }
        const response = await t.app.inject({
          method: operation.method as 'GET',
          url,
          headers,
          ...(payload === undefined ? {} : { payload }),
        });
        sent++;
        const where = `${operation.method} ${url.slice(0, 120)} → ${response.statusCode}`;
        if (response.statusCode >= 500 && !(response.statusCode === 501 && STUBS.has(operation.path)))
          failures.push(`${where} ${response.body.slice(0, 200)}`);
        else if (
          response.statusCode >= 400 &&
          response.statusCode < 500 &&
          isOurs(operation.path) &&
          response.headers['content-type']?.toString().startsWith('application/json')
        ) {
          const body = response.json() as Record<string, unknown>;
          if (typeof body.error !== 'string' || typeof body.message !== 'string' || typeof body.code !== 'string')
            failures.push(`${where} not an error body: ${response.body.slice(0, 200)}`);
        }
        const after = await rowCounts();
        if (response.statusCode >= 400 && after !== counts)
          failures.push(`${where} changed rows: ${changed(counts, after)}`);
        counts = after;
      }
    }
    expect(failures).toEqual([]);
    expect(sent).toBeGreaterThan(operations.length * (PER_OPERATION - 1) * 0.9);
  }, 600_000);
});

function changed(before: string, after: string): string {
  const old = new Set(before.split(' '));
  return after
    .split(' ')
    .filter((entry) => !old.has(entry))
    .join(' ');
}

/** Everything but GraphQL (`{ data, errors }`) and the OAuth provider's protocol endpoints (RFC 6749 bodies). */
function isOurs(path: string): boolean {
  return (
    !path.startsWith('/v1/gql') &&
    !(path.startsWith('/v1/oauth/') && !path.startsWith('/v1/oauth/clients') && path !== '/v1/oauth/revoke')
  );
}
