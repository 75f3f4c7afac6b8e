import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bearer,
  buildMailingTestApp,
  createUser,
  login,
  TEST_ADMIN,
  TEST_SYSTEM_KEY,
  type TestApp,
} from './helpers.js';
import { tokenFromMail, type FakeSmtp } from './fakes/smtp.js';

/** Links are built under PUBLIC_URL, path prefix included; Location is too. */
const BASE = 'https://api.waygate.test/tracking';
const POINT = {
  latitude: 53.5,
  longitude: 10,
  altitude: 5,
  heading: 90,
  timestamp: 1767225600,
  speed_kmh: 1,
  speed_mps: 0.28,
  speed_mph: 0.62,
  speed_knots: 0.54,
};

interface Created {
  status: number;
  location: string | undefined;
  body: Record<string, unknown>;
}

/**
 * One request that creates something, for every operation that documents a 201, and the path of what
 * it created (read off the answer). `get: false` where the interface has no GET at that address.
 */
type Case = {
  create: () => Promise<Created & { parent?: string }>;
  path: (body: Record<string, any>, parent: string) => string;
  get?: false;
};

let t: TestApp;
let smtp: FakeSmtp;
let admin: string;

async function send(method: 'POST' | 'PUT', url: string, payload: object, token = admin): Promise<Created> {
  const response = await t.app.inject({ method, url, payload, headers: bearer(token) });
  return {
    status: response.statusCode,
    location: response.headers.location as string | undefined,
    body: response.json(),
  };
}
const id = (body: Record<string, any>) => body.data.id as string;

const CASES: Record<string, Case> = {
  'POST /v1/auth/register/verify': {
    create: async () => {
      const email = `located${Date.now()}@example.org`;
      expect(
        (
          await t.app.inject({
            method: 'POST',
            url: '/v1/auth/register',
            payload: { email, username: `located${Date.now()}`, password: 'located password' },
          })
        ).statusCode,
      ).toBe(200);
      return send('POST', '/v1/auth/register/verify', { token: tokenFromMail(await smtp.waitFor(email)) });
    },
    path: (body) => `/v1/users/${body.user_id}`,
  },
  'POST /v1/oauth/clients': {
    create: () =>
      send('POST', '/v1/oauth/clients', { name: 'Located', redirect_uris: ['https://located.example.org/cb'] }),
    path: (body) => `/v1/oauth/clients/${body.client.id}`,
  },
  'POST /v1/roles': {
    create: () => send('POST', '/v1/roles', { name: `Located ${Date.now()}` }),
    path: (body) => `/v1/roles/${id(body)}`,
  },
  'POST /v1/roles/{id}/permissions': {
    create: async () => {
      const role = (await send('POST', '/v1/roles', { name: `Granted ${Date.now()}` })).body as {
        data: { id: string };
      };
      const permission = (await send('POST', '/v1/permissions', { resource: `granted${Date.now()}`, action: 'read' }))
        .body as { data: { id: string } };
      return {
        ...(await send('POST', `/v1/roles/${role.data.id}/permissions`, { permission_id: permission.data.id })),
        parent: role.data.id,
      };
    },
    path: (body, role) => `/v1/roles/${role}/permissions/${id(body)}`,
    get: false,
  },
  'POST /v1/permissions': {
    create: () => send('POST', '/v1/permissions', { resource: `located${Date.now()}`, action: 'read' }),
    path: (body) => `/v1/permissions/${id(body)}`,
  },
  'POST /v1/users/{id}/roles': {
    create: async () => {
      const user = await createUser(t.app);
      return { ...(await send('POST', `/v1/users/${user.id}/roles`, { role_id: 'role_developer' })), parent: user.id };
    },
    path: (_body, user) => `/v1/users/${user}/roles/role_developer`,
    get: false,
  },
  'POST /v1/sessions': {
    create: async () =>
      send(
        'POST',
        '/v1/sessions',
        { userId: (await createUser(t.app)).id, expires: new Date(Date.now() + 3_600_000).toISOString() },
        TEST_SYSTEM_KEY,
      ),
    path: (body) => `/v1/sessions/${body.sessionToken}`,
    get: false, // (it is there, for the system key only)
  },
  'POST /v1/api-keys': {
    create: () => send('POST', '/v1/api-keys', { name: 'located', scopes: ['gps:read'] }),
    path: (body) => `/v1/api-keys/${body.id}`,
  },
  'POST /v1/api-keys/{id}/roles': {
    create: async () => {
      const key = (await send('POST', '/v1/api-keys', { name: 'with a role' })).body as { id: string };
      return {
        ...(await send('POST', `/v1/api-keys/${key.id}/roles`, { role_id: 'role_api_read_only' })),
        parent: key.id,
      };
    },
    path: (_body, key) => `/v1/api-keys/${key}/roles/role_api_read_only`,
    get: false,
  },
  'POST /v1/users/me/audit/{event_id}/report': {
    create: async () => {
      const user = await createUser(t.app);
      const event = await send(
        'POST',
        '/v1/internal/audit',
        { event_type: 'user_updated', user_id: user.id },
        TEST_SYSTEM_KEY,
      );
      return send('POST', `/v1/users/me/audit/${event.body.id}/report`, { reason: 'not_me' }, user.token);
    },
    path: (body) => `/v1/admin/audit/reports/${body.report.id}`,
    get: false,
  },
  'POST /v1/settings': {
    create: () => send('POST', '/v1/settings', { key: `located.${Date.now()}`, value: 1 }),
    path: (body) => `/v1/settings/${body.data.key}`,
  },
  'PUT /v1/settings/{key}': {
    create: () => send('PUT', `/v1/settings/put.${Date.now()}`, { value: 2 }),
    path: (body) => `/v1/settings/${body.data.key}`,
  },
  'POST /v1/trip-templates': {
    create: () => send('POST', '/v1/trip-templates', { name: 'Located run' }),
    path: (body) => `/v1/trip-templates/${id(body)}`,
  },
  'POST /v1/trip-templates/{id}/create-trip': {
    create: async () => {
      const template = (await send('POST', '/v1/trip-templates', { name: 'Template of a trip' })).body as {
        data: { id: string };
      };
      return send('POST', `/v1/trip-templates/${template.data.id}/create-trip`, { weight_kg: 10 });
    },
    path: (body) => `/v1/trips/${id(body)}`,
  },
  'POST /v1/trips': {
    create: () => send('POST', '/v1/trips', { name: 'Located trip' }),
    path: (body) => `/v1/trips/${id(body)}`,
  },
  'POST /v1/locations': {
    create: () => send('POST', '/v1/locations', { name: 'Located harbour' }),
    path: (body) => `/v1/locations/${id(body)}`,
  },
  'POST /v1/locations/{id}/contacts': {
    create: async () => {
      const location = (await send('POST', '/v1/locations', { name: 'Harbour with a contact' })).body as {
        data: { id: string };
      };
      return send('POST', `/v1/locations/${location.data.id}/contacts`, { name: 'Harbour master' });
    },
    path: (body) => `/v1/locations/${body.data.location_id}/contacts/${id(body)}`,
    get: false,
  },
  'POST /v1/gps': { create: () => send('POST', '/v1/gps', POINT), path: (body) => `/v1/gps/${id(body)}` },
  'POST /v1/trip-categories': {
    create: () => send('POST', '/v1/trip-categories', { name: `Located ${Date.now()}` }),
    path: (body) => `/v1/trip-categories/${id(body)}`,
  },
  'POST /v1/geofences': {
    create: () => send('POST', '/v1/geofences', { name: 'Located fence', latitude: 53.5, longitude: 10, radius_km: 1 }),
    path: (body) => `/v1/geofences/${id(body)}`,
  },
  'POST /v1/devices': {
    create: () => send('POST', '/v1/devices', { name: 'Located boat' }),
    path: (body) => `/v1/devices/${id(body)}`,
  },
};

/** 201s without a Location, each with the reason. */
const WITHOUT_LOCATION: Record<string, string> = {
  'POST /v1/internal/audit': 'an audit event has no address of its own: the log is read through filtered lists',
  'POST /v1/users/me/passkeys':
    'a passkey has no address of its own: GET /v1/users/me/passkeys lists them (PATCH and DELETE take its id)',
};

beforeAll(async () => {
  ({ t, smtp } = await buildMailingTestApp({ config: { publicUrl: BASE } }));
  admin = await login(t.app, TEST_ADMIN.username, TEST_ADMIN.password);
});
afterAll(() => t.close());

describe('201 Created', () => {
  it('the table below covers every operation that documents a 201', async () => {
    const document = (await t.app.inject({ url: '/v1/openapi.json' })).json() as {
      paths: Record<string, Record<string, { responses?: Record<string, unknown> }>>;
    };
    const documented = Object.entries(document.paths).flatMap(([path, operations]) =>
      Object.entries(operations)
        .filter(([, operation]) => operation.responses?.['201'])
        .map(([method]) => `${method.toUpperCase()} ${path}`),
    );
    expect(documented.sort()).toEqual([...Object.keys(CASES), ...Object.keys(WITHOUT_LOCATION)].sort());
  });

  it.each(Object.entries(CASES))(
    '%s answers Location with the new resource, and _links.self is the same URL',
    async (_operation, { create, path, get }) => {
      const created = await create();
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      expect(created.location).toBe(BASE + path(created.body, created.parent ?? ''));
      const links = created.body._links as { self: string } | undefined;
      // A body that is one resource names it; a body that is a list (a key's roles) names the list.
      if (links && !Array.isArray(created.body.data)) expect(links.self).toBe(created.location);
      if (get !== false) {
        const read = await t.app.inject({
          url: new URL(created.location!).pathname.replace(/^\/tracking/, ''),
          headers: bearer(admin),
        });
        expect(read.statusCode, read.body).toBe(200);
      }
    },
  );
});
