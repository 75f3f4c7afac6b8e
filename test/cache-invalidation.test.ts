/**
 * Who-am-I, credentials and the role catalogue are answered from caches. Two nodes share one
 * database and one key-value store (Redis on the external back end); every change made through
 * node A must show on node B at B's very next request.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { HOLD_MS } from '../src/platform/kv/cache.js';
import { tokenFromMail, type FakeSmtp } from './fakes/smtp.js';
import {
  bearer,
  buildMailingTestApp,
  countingStatements,
  createApiKey,
  createUser,
  deviceWithKey,
  login,
  TEST_ADMIN,
  type TestApp,
} from './helpers.js';

let t: TestApp;
let smtp: FakeSmtp;
let nodeB: FastifyInstance;
let admin: string;
/** SQL statements node B has run. */
let statementsOnB: () => number;

beforeAll(async () => {
  ({ t, smtp } = await buildMailingTestApp());
  const counted = countingStatements(t.database);
  statementsOnB = counted.count;
  nodeB = await buildApp(t.config, { database: counted.database, kv: t.kv, clock: t.clock }, { logger: false });
  admin = await login(t.app, 'admin', TEST_ADMIN.password);
});
afterAll(async () => {
  await nodeB.close();
  await t.close();
});

const on = (
  app: FastifyInstance,
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
  url: string,
  token: string,
  payload?: object,
) => app.inject({ method, url, headers: bearer(token), ...(payload && { payload }) });

/**
 * Reads `url` on node B twice: the second answer must come without a database statement. (A change
 * keeps what it touched out of the caches for a moment, and setting up made changes.)
 */
async function expectCachedOnB(url: string, token: string) {
  t.clock.advance(HOLD_MS);
  expect((await on(nodeB, 'GET', url, token)).statusCode).toBe(200);
  const before = statementsOnB();
  const response = await on(nodeB, 'GET', url, token);
  expect(response.statusCode).toBe(200);
  expect(statementsOnB() - before).toBe(0);
  return response.json();
}

describe('answers from cache', () => {
  it("GET /v1/users/me, /v1/roles, /v1/permissions and a role's permissions need no database read once cached", async () => {
    const user = await createUser(t.app);
    expect((await expectCachedOnB('/v1/users/me', user.token)).data.username).toBe(user.username);
    await expectCachedOnB('/v1/roles', admin);
    await expectCachedOnB('/v1/permissions', admin);
    await expectCachedOnB('/v1/roles/role_user/permissions', admin);
  });
});

describe('a change on node A shows on node B at the next request', () => {
  it('a username and a locale', async () => {
    const user = await createUser(t.app);
    await expectCachedOnB('/v1/users/me', user.token);
    const name = `${user.username}_x`.slice(0, 30);
    expect((await on(t.app, 'PATCH', `/v1/users/${user.id}`, user.token, { username: name })).statusCode).toBe(200);
    expect((await on(nodeB, 'GET', '/v1/users/me', user.token)).json().data.username).toBe(name);
    expect((await on(t.app, 'PATCH', `/v1/users/${user.id}/locale`, user.token, { locale: 'de' })).statusCode).toBe(
      200,
    );
    expect((await on(nodeB, 'GET', '/v1/users/me', user.token)).json().data.preferred_locale).toBe('de');
  });

  it('a new role, a renamed one, a deleted one', async () => {
    await expectCachedOnB('/v1/roles', admin);
    const created = await on(t.app, 'POST', '/v1/roles', admin, { name: `Cache crew ${Date.now()}` });
    expect(created.statusCode).toBe(201);
    const id = created.json().data.id as string;
    expect((await on(nodeB, 'GET', '/v1/roles', admin)).json().data.map((role: { id: string }) => role.id)).toContain(
      id,
    );
    expect((await on(t.app, 'PATCH', `/v1/roles/${id}`, admin, { description: 'renamed' })).statusCode).toBe(200);
    expect((await on(nodeB, 'GET', `/v1/roles/${id}`, admin)).json().data.description).toBe('renamed');
    expect((await on(t.app, 'DELETE', `/v1/roles/${id}`, admin)).statusCode).toBe(204);
    expect((await on(nodeB, 'GET', `/v1/roles/${id}`, admin)).statusCode).toBe(404);
  });

  it('a permission granted to a role: listed, and held by its members', async () => {
    const role = (await on(t.app, 'POST', '/v1/roles', admin, { name: `Readers ${Date.now()}` })).json().data
      .id as string;
    const user = await createUser(t.app, ['role_user', role]);
    expect((await on(nodeB, 'GET', '/v1/roles', user.token)).statusCode).toBe(403);
    await expectCachedOnB(`/v1/roles/${role}/permissions`, admin);
    const rolesRead = (await on(t.app, 'GET', '/v1/permissions', admin))
      .json()
      .data.find((p: { resource: string; action: string }) => p.resource === 'roles' && p.action === 'read');
    expect(
      (await on(t.app, 'POST', `/v1/roles/${role}/permissions`, admin, { permission_id: rolesRead.id })).statusCode,
    ).toBe(201);
    expect(
      (await on(nodeB, 'GET', `/v1/roles/${role}/permissions`, admin)).json().data.map((p: { id: string }) => p.id),
    ).toEqual([rolesRead.id]);
    expect((await on(nodeB, 'GET', '/v1/roles', user.token)).statusCode).toBe(200);
    expect((await on(t.app, 'DELETE', `/v1/roles/${role}/permissions/${rolesRead.id}`, admin)).statusCode).toBe(204);
    expect((await on(nodeB, 'GET', `/v1/roles/${role}/permissions`, admin)).json().data).toEqual([]);
    expect((await on(nodeB, 'GET', '/v1/roles', user.token)).statusCode).toBe(403);
  });

  it('a new permission', async () => {
    await expectCachedOnB('/v1/permissions', admin);
    const resource = `cache${Date.now()}`;
    expect((await on(t.app, 'POST', '/v1/permissions', admin, { resource, action: 'read' })).statusCode).toBe(201);
    expect(
      (await on(nodeB, 'GET', '/v1/permissions', admin))
        .json()
        .data.some((p: { resource: string }) => p.resource === resource),
    ).toBe(true);
  });

  it('a revoked API key and an ended session', async () => {
    const user = await createUser(t.app);
    const key = await createApiKey(t.app, admin, { name: 'cached', scopes: ['gps:read'] });
    await expectCachedOnB('/v1/users/me', key.key);
    expect((await on(t.app, 'DELETE', `/v1/api-keys/${key.id}`, admin)).statusCode).toBe(204);
    expect((await on(nodeB, 'GET', '/v1/users/me', key.key)).statusCode).toBe(401);
    expect((await on(t.app, 'POST', '/v1/auth/logout', user.token)).statusCode).toBe(200);
    expect((await on(nodeB, 'GET', '/v1/users/me', user.token)).statusCode).toBe(401);
  });

  it("an API key's device: re-linked to a new device, moved back, deleted: node B's next point follows", async () => {
    const tracker = await deviceWithKey(t.app, admin);
    let second = 1_700_000_000;
    const deviceOfPointOnB = async () => {
      const point = {
        latitude: 50,
        longitude: 8,
        timestamp: second++,
        speed_kmh: 0,
        speed_mps: 0,
        speed_mph: 0,
        speed_knots: 0,
      };
      const response = await on(nodeB, 'POST', '/v1/gps', tracker.key, point);
      expect(response.statusCode).toBe(201);
      return response.json().data.device_id as string | undefined;
    };
    // Once node B knows the key's device, a point costs it one statement: the insert (its logging-trip lookup inside it).
    t.clock.advance(HOLD_MS);
    expect(await deviceOfPointOnB()).toBe(tracker.deviceId);
    const before = statementsOnB();
    expect(await deviceOfPointOnB()).toBe(tracker.deviceId);
    expect(statementsOnB() - before).toBe(1);

    const other = await on(t.app, 'POST', '/v1/devices', admin, { name: 'new tracker', api_key_id: tracker.keyId });
    expect(other.statusCode).toBe(201);
    expect(await deviceOfPointOnB()).toBe(other.json().data.id);
    expect(
      (await on(t.app, 'PATCH', `/v1/devices/${tracker.deviceId}`, admin, { api_key_id: tracker.keyId })).statusCode,
    ).toBe(200);
    expect(await deviceOfPointOnB()).toBe(tracker.deviceId);
    expect((await on(t.app, 'DELETE', `/v1/devices/${tracker.deviceId}`, admin)).statusCode).toBe(204);
    expect(await deviceOfPointOnB()).toBeUndefined();
  });

  it('a ban, then a deletion', async () => {
    const banned = await createUser(t.app);
    await expectCachedOnB('/v1/users/me', banned.token);
    expect((await on(t.app, 'POST', `/v1/users/${banned.id}/ban`, admin, { reason: 'spam' })).statusCode).toBe(200);
    expect((await on(nodeB, 'GET', '/v1/users/me', banned.token)).statusCode).toBe(401);

    const deleted = await createUser(t.app);
    await expectCachedOnB(`/v1/users/${deleted.id}`, admin);
    expect((await on(t.app, 'DELETE', `/v1/users/${deleted.id}`, admin)).statusCode).toBe(204);
    expect((await on(nodeB, 'GET', '/v1/users/me', deleted.token)).statusCode).toBe(401);
    expect((await on(nodeB, 'GET', `/v1/users/${deleted.id}`, admin)).statusCode).toBe(404);
  });

  it('an OAuth client: a regenerated secret, narrowed scopes, first-party status, deactivation, deletion', async () => {
    const created = await on(t.app, 'POST', '/v1/oauth/clients', admin, {
      name: 'Cached client',
      redirect_uris: ['https://rp.example.org/cb'],
      allowed_scopes: ['roles:read'],
    });
    expect(created.statusCode).toBe(201);
    const { client: registered, client_secret: firstSecret } = created.json() as {
      client: { id: string };
      client_secret: string;
    };
    const grant = (app: FastifyInstance, secret: string, scope?: string) =>
      app.inject({
        method: 'POST',
        url: '/v1/oauth/token',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`${registered.id}:${secret}`).toString('base64')}`,
        },
        payload: new URLSearchParams({ grant_type: 'client_credentials', ...(scope ? { scope } : {}) }).toString(),
      });
    // Once node B has read the client, a grant costs it one statement: the token's insert.
    expect((await grant(nodeB, firstSecret, 'roles:read')).statusCode).toBe(200);
    const before = statementsOnB();
    expect((await grant(nodeB, firstSecret, 'roles:read')).statusCode).toBe(200);
    expect(statementsOnB() - before).toBe(1);

    const regenerated = await on(t.app, 'POST', `/v1/oauth/clients/${registered.id}/regenerate-secret`, admin);
    const secret = regenerated.json().client_secret as string;
    expect((await grant(nodeB, firstSecret)).json().error).toBe('invalid_client');
    expect((await grant(nodeB, secret, 'roles:read')).statusCode).toBe(200);

    expect(
      (await on(t.app, 'PATCH', `/v1/oauth/clients/${registered.id}`, admin, { allowed_scopes: ['users:read'] }))
        .statusCode,
    ).toBe(200);
    expect((await grant(nodeB, secret, 'roles:read')).json().error).toBe('invalid_scope');
    expect(
      (await on(t.app, 'PATCH', `/v1/oauth/clients/${registered.id}`, admin, { is_active: false })).statusCode,
    ).toBe(200);
    expect((await grant(nodeB, secret)).json().error).toBe('invalid_client');
    expect(
      (await on(t.app, 'PATCH', `/v1/oauth/clients/${registered.id}`, admin, { is_active: true })).statusCode,
    ).toBe(200);
    expect((await grant(nodeB, secret)).statusCode).toBe(200);
    expect((await on(t.app, 'DELETE', `/v1/oauth/clients/${registered.id}`, admin)).statusCode).toBe(204);
    expect((await grant(nodeB, secret)).json().error).toBe('invalid_client');
    expect((await on(nodeB, 'GET', `/v1/oauth/clients/${registered.id}`, admin)).statusCode).toBe(404);

    // Made first-party (after which it cannot be changed or deleted): node B sees it at once.
    const other = (
      await on(t.app, 'POST', '/v1/oauth/clients', admin, {
        name: 'Cached client 2',
        redirect_uris: ['https://rp.example.org/cb'],
      })
    ).json().client.id as string;
    expect((await on(nodeB, 'GET', `/v1/oauth/clients/${other}`, admin)).json().is_first_party).toBe(false);
    expect((await on(t.app, 'PATCH', `/v1/oauth/clients/${other}`, admin, { is_first_party: true })).statusCode).toBe(
      200,
    );
    expect((await on(nodeB, 'GET', `/v1/oauth/clients/${other}`, admin)).json().is_first_party).toBe(true);
  });

  it('a password reset ends the sessions', async () => {
    const user = await createUser(t.app);
    await expectCachedOnB('/v1/users/me', user.token);
    const email = `${user.username}@example.org`;
    expect(
      (await t.app.inject({ method: 'POST', url: '/v1/auth/reset-password', payload: { email } })).statusCode,
    ).toBe(200);
    await smtp.waitFor(email, () => smtp.received.some((mail) => mail.to === email));
    const token = tokenFromMail(smtp.received.filter((mail) => mail.to === email).at(-1)!);
    const done = await t.app.inject({
      method: 'POST',
      url: '/v1/auth/reset-password/complete',
      payload: { token, new_password: 'another good password' },
    });
    expect(done.statusCode).toBe(200);
    expect((await on(nodeB, 'GET', '/v1/users/me', user.token)).statusCode).toBe(401);
  });
});
