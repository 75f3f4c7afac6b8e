import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from './client.js';
import { buildMailingTestApp, createUser, login, TEST_ADMIN, TEST_SYSTEM_KEY, type TestApp } from './helpers.js';
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

/** The admin's client (signed in before the cases run). */
const api = (): Client => t.as(admin);
/** What a request that creates something answered: its status, Location and body. */
async function asCreated(answer: Promise<{ status: number; headers: Record<string, unknown>; body: unknown }>) {
  const response = await answer;
  return {
    status: response.status,
    location: response.headers.location as string | undefined,
    body: response.body as Record<string, unknown>,
  } satisfies Created;
}
const id = (body: Record<string, any>) => body.data.id as string;

const CASES: Record<string, Case> = {
  'POST /v1/auth/register/verify': {
    create: async () => {
      const email = `located${Date.now()}@example.org`;
      await t
        .as(null)
        .post('/v1/auth/register', { email, username: `located${Date.now()}`, password: 'located password' })
        .expect(200);
      return asCreated(
        t.as(null).post('/v1/auth/register/verify', { token: tokenFromMail(await smtp.waitFor(email)) }),
      );
    },
    path: (body) => `/v1/users/${body.user_id}`,
  },
  'POST /v1/oauth/clients': {
    create: () =>
      asCreated(
        api().post('/v1/oauth/clients', { name: 'Located', redirect_uris: ['https://located.example.org/cb'] }),
      ),
    path: (body) => `/v1/oauth/clients/${body.client.id}`,
  },
  'POST /v1/roles': {
    create: () => asCreated(api().post('/v1/roles', { name: `Located ${Date.now()}` })),
    path: (body) => `/v1/roles/${id(body)}`,
  },
  'POST /v1/roles/{id}/permissions': {
    create: async () => {
      const role = (
        await api()
          .post('/v1/roles', { name: `Granted ${Date.now()}` })
          .expect(201)
      ).body.data;
      const permission = (
        await api()
          .post('/v1/permissions', { resource: `granted${Date.now()}`, action: 'read' })
          .expect(201)
      ).body.data;
      return {
        ...(await asCreated(api().post(`/v1/roles/${role.id}/permissions`, { permission_id: permission.id }))),
        parent: role.id,
      };
    },
    path: (body, role) => `/v1/roles/${role}/permissions/${id(body)}`,
    get: false,
  },
  'POST /v1/permissions': {
    create: () => asCreated(api().post('/v1/permissions', { resource: `located${Date.now()}`, action: 'read' })),
    path: (body) => `/v1/permissions/${id(body)}`,
  },
  'POST /v1/users/{id}/roles': {
    create: async () => {
      const user = await createUser(t.app);
      return {
        ...(await asCreated(api().post(`/v1/users/${user.id}/roles`, { role_id: 'role_developer' }))),
        parent: user.id,
      };
    },
    path: (_body, user) => `/v1/users/${user}/roles/role_developer`,
    get: false,
  },
  'POST /v1/sessions': {
    create: async () =>
      asCreated(
        t.as(TEST_SYSTEM_KEY).post('/v1/sessions', {
          userId: (await createUser(t.app)).id,
          expires: new Date(Date.now() + 3_600_000).toISOString(),
        }),
      ),
    path: (body) => `/v1/sessions/${body.sessionToken}`,
    get: false, // (it is there, for the system key only)
  },
  'POST /v1/api-keys': {
    create: () => asCreated(api().post('/v1/api-keys', { name: 'located', scopes: ['gps:read'] })),
    path: (body) => `/v1/api-keys/${body.id}`,
  },
  'POST /v1/api-keys/{id}/roles': {
    create: async () => {
      const key = (await api().post('/v1/api-keys', { name: 'with a role' }).expect(201)).body;
      return {
        ...(await asCreated(api().post(`/v1/api-keys/${key.id}/roles`, { role_id: 'role_api_read_only' }))),
        parent: key.id,
      };
    },
    path: (_body, key) => `/v1/api-keys/${key}/roles/role_api_read_only`,
    get: false,
  },
  'POST /v1/users/me/audit/{event_id}/report': {
    create: async () => {
      const user = await createUser(t.app);
      const event = (
        await t
          .as(TEST_SYSTEM_KEY)
          .post('/v1/internal/audit', { event_type: 'user_updated', user_id: user.id })
          .expect(201)
      ).body;
      return asCreated(t.as(user.token).post(`/v1/users/me/audit/${event.id}/report`, { reason: 'not_me' }));
    },
    path: (body) => `/v1/admin/audit/reports/${body.report.id}`,
    get: false,
  },
  'POST /v1/settings': {
    create: () => asCreated(api().post('/v1/settings', { key: `located.${Date.now()}`, value: 1 })),
    path: (body) => `/v1/settings/${body.data.key}`,
  },
  'PUT /v1/settings/{key}': {
    create: () => asCreated(api().put(`/v1/settings/put.${Date.now()}`, { value: 2 })),
    path: (body) => `/v1/settings/${body.data.key}`,
  },
  'POST /v1/trip-templates': {
    create: () => asCreated(api().post('/v1/trip-templates', { name: 'Located run' })),
    path: (body) => `/v1/trip-templates/${id(body)}`,
  },
  'POST /v1/trip-templates/{id}/create-trip': {
    create: async () => {
      const template = (await api().post('/v1/trip-templates', { name: 'Template of a trip' }).expect(201)).body.data;
      return asCreated(api().post(`/v1/trip-templates/${template.id}/create-trip`, { weight_kg: 10 }));
    },
    path: (body) => `/v1/trips/${id(body)}`,
  },
  'POST /v1/trips': {
    create: () => asCreated(api().post('/v1/trips', { name: 'Located trip' })),
    path: (body) => `/v1/trips/${id(body)}`,
  },
  'POST /v1/locations': {
    create: () => asCreated(api().post('/v1/locations', { name: 'Located harbour' })),
    path: (body) => `/v1/locations/${id(body)}`,
  },
  'POST /v1/locations/{id}/contacts': {
    create: async () => {
      const location = (await api().post('/v1/locations', { name: 'Harbour with a contact' }).expect(201)).body.data;
      return asCreated(api().post(`/v1/locations/${location.id}/contacts`, { name: 'Harbour master' }));
    },
    path: (body) => `/v1/locations/${body.data.location_id}/contacts/${id(body)}`,
    get: false,
  },
  'POST /v1/gps': { create: () => asCreated(api().post('/v1/gps', POINT)), path: (body) => `/v1/gps/${id(body)}` },
  'POST /v1/trip-categories': {
    create: () => asCreated(api().post('/v1/trip-categories', { name: `Located ${Date.now()}` })),
    path: (body) => `/v1/trip-categories/${id(body)}`,
  },
  'POST /v1/geofences': {
    create: () =>
      asCreated(api().post('/v1/geofences', { name: 'Located fence', latitude: 53.5, longitude: 10, radius_km: 1 })),
    path: (body) => `/v1/geofences/${id(body)}`,
  },
  'POST /v1/devices': {
    create: () => asCreated(api().post('/v1/devices', { name: 'Located boat' })),
    path: (body) => `/v1/devices/${id(body)}`,
  },
  'POST /v1/devices/{id}/key': {
    create: async () => {
      const device = (await api().post('/v1/devices', { name: 'Rekeyed boat' }).expect(201)).body.data;
      return asCreated(api().post(`/v1/devices/${device.id}/key`));
    },
    path: (body) => `/v1/api-keys/${body.id as string}`,
  },
  'POST /v1/groups': {
    create: () => asCreated(api().post('/v1/groups', { name: 'Located crew' })),
    path: (body) => `/v1/groups/${id(body)}`,
  },
  'POST /v1/notification-channels': {
    create: () =>
      asCreated(api().post('/v1/notification-channels', { type: 'email', name: 'Located mail', config: {} })),
    path: (body) => `/v1/notification-channels/${id(body)}`,
  },
  'POST /v1/notification-rules': {
    create: async () => {
      const channel = (
        await api().post('/v1/notification-channels', { type: 'email', name: 'Rule mail', config: {} }).expect(201)
      ).body.data;
      return asCreated(
        api().post('/v1/notification-rules', { name: 'Located rule', event_types: ['sos'], channel_ids: [channel.id] }),
      );
    },
    path: (body) => `/v1/notification-rules/${id(body)}`,
  },
  'POST /v1/groups/{id}/invitations': {
    create: async () => {
      const group = (await api().post('/v1/groups', { name: 'Inviting crew' }).expect(201)).body.data;
      const { username } = await createUser(t.app);
      const created = await asCreated(api().post(`/v1/groups/${group.id}/invitations`, { username }));
      return { ...created, parent: group.id };
    },
    path: (body, parent) => `/v1/groups/${parent}/invitations/${id(body)}`,
    // Invitations are listed (GET /v1/groups/{id}/invitations, GET /v1/invitations); one is withdrawn by its address.
    get: false,
  },
  'POST /v1/shares': {
    create: async () => {
      const { id: userId } = await createUser(t.app);
      return asCreated(api().post('/v1/shares', { user_id: userId, level: 'live' }));
    },
    path: (body) => `/v1/shares/${id(body)}`,
    // Shares are listed (GET /v1/shares, GET /v1/devices/{id}/shares); one is changed or ended by its address.
    get: false,
  },
  'POST /v1/devices/{id}/shares': {
    create: async () => {
      const device = (await api().post('/v1/devices', { name: 'Shared boat' }).expect(201)).body.data;
      const { id: userId } = await createUser(t.app);
      return asCreated(api().post(`/v1/devices/${device.id}/shares`, { user_id: userId, level: 'history' }));
    },
    path: (body) => `/v1/shares/${id(body)}`,
    get: false,
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
    const document = (await t.as(null).raw({ method: 'GET', url: '/v1/openapi.json' })).body as {
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
        const read = await api().raw({
          method: 'GET',
          url: new URL(created.location!).pathname.replace(/^\/tracking/, ''),
        });
        expect(read.status, read.text).toBe(200);
      }
    },
  );
});
