import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, buildTestApp, createApiKey, createUser, forbidden, UNKNOWN_ID, type TestApp } from './helpers.js';

/**
 * Issue 36: a key created with `scopes: []` (a device key on a phone, or one an app with api_keys:write
 * mints) reached its owner's OAuth clients, activity log and data export, because those routes named no
 * permission. Every route that takes a bearer credential is walked here with such a key: a route with a
 * permission (`x-permission`) must refuse it with 403 naming that permission, and every other route must be
 * listed below with the answer it gives and why a key may reach it. A new route nobody decided on fails.
 */
interface Operation {
  security?: Record<string, string[]>[];
  'x-permission'?: string;
}

interface OpenRoute {
  status: number;
  code?: string;
  permission?: string;
  why: string;
  payload?: object;
}

/** Routes that refuse every key alike (403 with this code), for the same reason. */
const refusedWith = (code: string, why: string, names: string[]): Record<string, OpenRoute> =>
  Object.fromEntries(names.map((name) => [name, { status: 403, code, why }]));

/** Routes without a permission: what a scope-less key gets from each, and why that gives nothing away. */
const OPEN: Record<string, OpenRoute> = {
  'GET /v1/users/me': { status: 200, why: 'who the caller is' },
  'GET /v1/users/email/{email}': {
    status: 200,
    why: "the caller found by their own address (anyone else's is 403): who it is",
  },
  'POST /v1/auth/logout': {
    status: 401,
    code: 'auth.unauthorized',
    why: 'ends the session it is called with; a key is revoked instead',
  },
  'POST /v1/users/email/verify': {
    status: 400,
    code: 'mailed_token.invalid',
    payload: { token: 'x'.repeat(43) },
    why: 'the mailed token is the credential and decides the user',
  },
  'POST /v1/users/email-link/verify': {
    status: 400,
    code: 'mailed_token.invalid',
    payload: { token: 'x'.repeat(43) },
    why: 'the mailed token is the credential and decides the user',
  },
  ...refusedWith('session.session_required', 'a session only', [
    'GET /v1/users/me/sessions',
    'DELETE /v1/users/me/sessions',
    'DELETE /v1/users/me/sessions/{session_id}',
    'POST /v1/users/me/passkeys',
    'GET /v1/users/me/passkeys',
    'PATCH /v1/users/me/passkeys/{id}',
    'DELETE /v1/users/me/passkeys/{id}',
    'GET /v1/users/me/security-notifications',
    'PATCH /v1/users/me/security-notifications',
    'POST /v1/users/me/delete',
  ]),
  ...refusedWith('auth.system_key_required', 'the system key only', [
    'POST /v1/sessions',
    'GET /v1/sessions/{token}',
    'DELETE /v1/sessions/{token}',
    'POST /v1/auth/2fa/check',
  ]),
  'POST /v1/users/me/password': {
    status: 403,
    code: 'session.session_required',
    why: 'a session only: the person who knows the password',
  },
  'POST /v1/users/me/passkeys/options': {
    status: 403,
    code: 'session.session_required',
    why: 'a session only: passkeys belong to the person',
  },
  'POST /v1/oauth/revoke': {
    status: 403,
    code: 'oauth.user_context_required',
    payload: { client_id: UNKNOWN_ID },
    why: 'a session only',
  },
  'POST /v1/oauth/interaction/{uid}/handoff': {
    status: 403,
    code: 'oauth.handoff_needs_session',
    why: 'a session only',
  },
  'POST /v1/ws/ticket': {
    status: 403,
    code: 'ws.user_context_required',
    why: "a session or an app's token; a key connects with its own header",
  },
  'POST /v1/users/oauth': { status: 401, code: 'oauth_sign_in.system_key_only', why: 'the system key only' },
  'POST /v1/internal/audit': {
    status: 403,
    permission: 'audit:write',
    payload: { event_type: 'user_updated' },
    why: "audit:write (or an internal app's key), checked by the service",
  },
  'GET /v1/gql': { status: 200, why: 'GraphQL: each resolver checks as its REST route does (see graphql.test.ts)' },
  'POST /v1/gql': {
    status: 200,
    payload: { query: '{ me { userId } }' },
    why: 'GraphQL: each resolver checks as its REST route does (see graphql.test.ts)',
  },
};

let t: TestApp;
let owner: Awaited<ReturnType<typeof createUser>>;
let key: string;
let operations: [string, Operation][];
beforeAll(async () => {
  t = await buildTestApp();
  // The owner holds every permission of the default user and developer roles, so a refusal is the key's, not the owner's.
  owner = await createUser(t.app, ['role_user', 'role_developer']);
  key = (await createApiKey(t.app, owner.token, { name: 'device', scopes: [] })).key;
  const document = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json() as {
    paths: Record<string, Record<string, Operation>>;
  };
  operations = Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(
      ([method, operation]) => [`${method.toUpperCase()} ${path}`, operation] as [string, Operation],
    ),
  );
});
afterAll(() => t.close());

/** A path with its parameters filled in: user ids are the owner's own (an "or self" route must not let the key through). */
function urlOf(path: string): string {
  return (
    path.replace(/\{([a-z_]+)\}/g, (_, name: string) => {
      if (name === 'id' || name === 'user_id') return owner.id;
      if (name === 'email') return encodeURIComponent(`${owner.username}@example.org`);
      if (name.endsWith('id')) return UNKNOWN_ID;
      return name === 'slug' || name === 'platform' || name === 'id_or_slug' ? 'email' : 'x';
    }) + (path === '/v1/gql' ? `?query=${encodeURIComponent('{ me { userId } }')}` : '')
  );
}

describe('an API key created without scopes', () => {
  it('gets 403 naming the permission from every route that has one, and only the listed answers elsewhere', async () => {
    const guarded = operations.filter(([, operation]) =>
      operation.security?.some((requirement) => 'bearer' in requirement),
    );
    const answers: Record<string, unknown>[] = [];
    const expected: Record<string, unknown>[] = [];
    for (const [name, operation] of guarded) {
      const [method, path] = name.split(' ') as ['GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', string];
      const open = OPEN[name];
      const response = await t.app.inject({
        method,
        url: urlOf(path),
        headers: bearer(key),
        ...(open?.payload ? { payload: open.payload } : {}),
      });
      const body = response.headers['content-type']?.toString().startsWith('application/json') ? response.json() : {};
      const permission = operation['x-permission'] ?? open?.permission;
      if (permission) {
        answers.push({ name, status: response.statusCode, body });
        expected.push({ name, status: 403, body: forbidden(permission) });
      } else {
        answers.push({ name, status: response.statusCode, code: body.code });
        expected.push({
          name,
          status: open?.status ?? 'a route with no permission that nobody listed here',
          code: open?.code,
        });
      }
    }
    expect(answers).toEqual(expected);
    // Every listed route exists and takes a credential (a stale entry would hide a renamed route).
    expect(Object.keys(OPEN).filter((name) => !guarded.some(([found]) => found === name))).toEqual([]);
    // GraphQL answered who the key is, and nothing else.
    const me = await t.app.inject({
      method: 'POST',
      url: '/v1/gql',
      headers: bearer(key),
      payload: { query: '{ me { userId permissions } }' },
    });
    expect(me.json()).toEqual({ data: { me: { userId: owner.id, permissions: [] } } });
  });

  it("states in the OpenAPI document which permission a key needs on the routes of one's own account", () => {
    const described = Object.fromEntries(operations.map(([name, operation]) => [name, operation['x-permission']]));
    expect({
      'PATCH /v1/oauth/clients/{id}': described['PATCH /v1/oauth/clients/{id}'],
      'POST /v1/oauth/clients/{id}/regenerate-secret': described['POST /v1/oauth/clients/{id}/regenerate-secret'],
      'GET /v1/users/me/audit': described['GET /v1/users/me/audit'],
      'POST /v1/users/me/audit/{event_id}/report': described['POST /v1/users/me/audit/{event_id}/report'],
      'GET /v1/user/export': described['GET /v1/user/export'],
      'GET /v1/integrations': described['GET /v1/integrations'],
      'DELETE /v1/integrations/{id}': described['DELETE /v1/integrations/{id}'],
      'POST /v1/auth/logout-everywhere': described['POST /v1/auth/logout-everywhere'],
      'POST /v1/users/me/2fa/setup': described['POST /v1/users/me/2fa/setup'],
    }).toEqual({
      'PATCH /v1/oauth/clients/{id}': 'oauth_clients:write',
      'POST /v1/oauth/clients/{id}/regenerate-secret': 'oauth_clients:write',
      'GET /v1/users/me/audit': 'audit:read_own',
      'POST /v1/users/me/audit/{event_id}/report': 'audit:report_own',
      'GET /v1/user/export': 'export:read',
      'GET /v1/integrations': 'integrations:read',
      'DELETE /v1/integrations/{id}': 'integrations:write',
      'POST /v1/auth/logout-everywhere': 'connected_apps:sign_out',
      'POST /v1/users/me/2fa/setup': 'two_factor:manage',
    });
  });

  it("reaches its owner's account with the permission, and the owner's session needs none", async () => {
    const scoped = (
      await createApiKey(t.app, owner.token, {
        name: 'account tool',
        scopes: ['audit:read_own', 'export:read', 'integrations:read', 'connected_apps:sign_out'],
      })
    ).key;
    for (const url of [
      '/v1/users/me/audit',
      '/v1/users/me/audit/reports',
      '/v1/user/export/logs',
      '/v1/integrations',
    ]) {
      for (const credential of [scoped, owner.token]) {
        const response = await t.app.inject({ method: 'GET', url, headers: bearer(credential) });
        expect({ url, status: response.statusCode }).toEqual({ url, status: 200 });
      }
    }
    expect(
      (await t.app.inject({ method: 'POST', url: '/v1/auth/logout-everywhere', headers: bearer(scoped) })).statusCode,
    ).toBe(200);
  });
});
