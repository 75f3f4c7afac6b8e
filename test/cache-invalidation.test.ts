/**
 * Who-am-I, credentials and the role catalogue are answered from caches. Two nodes share one
 * database and one key-value store (Redis on the external back end); every change made through
 * node A must show on node B at B's very next request.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { HOLD_MS } from '../src/platform/kv/cache.js';
import { client } from './client.js';
import { tokenFromMail, type FakeSmtp } from './fakes/smtp.js';
import {
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

/** Requests to node A (the test app) and to node B. */
const onA = (token: string) => t.as(token);
const onB = (token: string) => client(nodeB, token);

/**
 * Sends `read` (a GET to node B) twice: the second answer must come without a database statement. (A change
 * keeps what it touched out of the caches for a moment, and setting up made changes.)
 */
async function expectCachedOnB<A extends { status: number }>(read: () => Promise<A>): Promise<A> {
  t.clock.advance(HOLD_MS);
  expect((await read()).status).toBe(200);
  const before = statementsOnB();
  const response = await read();
  expect(response.status).toBe(200);
  expect(statementsOnB() - before).toBe(0);
  return response;
}

describe('answers from cache', () => {
  it("GET /v1/users/me, /v1/roles, /v1/permissions and a role's permissions need no database read once cached", async () => {
    const user = await createUser(t.app);
    const me = await expectCachedOnB(() => onB(user.token).get('/v1/users/me').expect(200));
    expect(me.body.data.username).toBe(user.username);
    await expectCachedOnB(() => onB(admin).get('/v1/roles'));
    await expectCachedOnB(() => onB(admin).get('/v1/permissions'));
    await expectCachedOnB(() => onB(admin).get('/v1/roles/role_user/permissions'));
  });
});

describe('a change on node A shows on node B at the next request', () => {
  it('a username and a locale', async () => {
    const user = await createUser(t.app);
    await expectCachedOnB(() => onB(user.token).get('/v1/users/me'));
    const name = `${user.username}_x`.slice(0, 30);
    expect((await onA(user.token).patch(`/v1/users/${user.id}`, { username: name })).status).toBe(200);
    expect((await onB(user.token).get('/v1/users/me').expect(200)).body.data.username).toBe(name);
    expect((await onA(user.token).patch(`/v1/users/${user.id}/locale`, { locale: 'de' })).status).toBe(200);
    expect((await onB(user.token).get('/v1/users/me').expect(200)).body.data.preferred_locale).toBe('de');
  });

  it('a new role, a renamed one, a deleted one', async () => {
    await expectCachedOnB(() => onB(admin).get('/v1/roles'));
    const created = await onA(admin)
      .post('/v1/roles', { name: `Cache crew ${Date.now()}` })
      .expect(201);
    const id = created.body.data.id;
    expect((await onB(admin).get('/v1/roles').expect(200)).body.data.map((role) => role.id)).toContain(id);
    expect((await onA(admin).patch(`/v1/roles/${id}`, { description: 'renamed' })).status).toBe(200);
    expect((await onB(admin).get(`/v1/roles/${id}`).expect(200)).body.data.description).toBe('renamed');
    expect((await onA(admin).delete(`/v1/roles/${id}`)).status).toBe(204);
    expect((await onB(admin).get(`/v1/roles/${id}`)).status).toBe(404);
  });

  it('a permission granted to a role: listed, and held by its members', async () => {
    const role = (
      await onA(admin)
        .post('/v1/roles', { name: `Readers ${Date.now()}` })
        .expect(201)
    ).body.data.id;
    const user = await createUser(t.app, ['role_user', role]);
    expect((await onB(user.token).get('/v1/roles')).status).toBe(403);
    await expectCachedOnB(() => onB(admin).get(`/v1/roles/${role}/permissions`));
    const rolesRead = (await onA(admin).get('/v1/permissions').expect(200)).body.data.find(
      (p) => p.resource === 'roles' && p.action === 'read',
    )!;
    expect((await onA(admin).post(`/v1/roles/${role}/permissions`, { permission_id: rolesRead.id })).status).toBe(201);
    expect((await onB(admin).get(`/v1/roles/${role}/permissions`).expect(200)).body.data.map((p) => p.id)).toEqual([
      rolesRead.id,
    ]);
    expect((await onB(user.token).get('/v1/roles')).status).toBe(200);
    expect((await onA(admin).delete(`/v1/roles/${role}/permissions/${rolesRead.id}`)).status).toBe(204);
    expect((await onB(admin).get(`/v1/roles/${role}/permissions`).expect(200)).body.data).toEqual([]);
    expect((await onB(user.token).get('/v1/roles')).status).toBe(403);
  });

  it('a new permission', async () => {
    await expectCachedOnB(() => onB(admin).get('/v1/permissions'));
    const resource = `cache${Date.now()}`;
    expect((await onA(admin).post('/v1/permissions', { resource, action: 'read' })).status).toBe(201);
    expect((await onB(admin).get('/v1/permissions').expect(200)).body.data.some((p) => p.resource === resource)).toBe(
      true,
    );
  });

  it('a revoked API key and an ended session', async () => {
    const user = await createUser(t.app);
    const key = await createApiKey(t.app, admin, { name: 'cached', scopes: ['gps:read'] });
    await expectCachedOnB(() => onB(key.key).get('/v1/users/me'));
    expect((await onA(admin).delete(`/v1/api-keys/${key.id}`)).status).toBe(204);
    expect((await onB(key.key).get('/v1/users/me')).status).toBe(401);
    expect((await onA(user.token).post('/v1/auth/logout')).status).toBe(200);
    expect((await onB(user.token).get('/v1/users/me')).status).toBe(401);
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
      const response = await onB(tracker.key).post('/v1/gps', point).expect(201);
      return response.body.data.device_id;
    };
    // Once node B knows the key's device, a point costs it one statement: the insert (its logging-trip lookup inside it).
    t.clock.advance(HOLD_MS);
    expect(await deviceOfPointOnB()).toBe(tracker.deviceId);
    const before = statementsOnB();
    expect(await deviceOfPointOnB()).toBe(tracker.deviceId);
    expect(statementsOnB() - before).toBe(1);

    const other = await onA(admin).post('/v1/devices', { name: 'new tracker', api_key_id: tracker.keyId }).expect(201);
    expect(await deviceOfPointOnB()).toBe(other.body.data.id);
    expect((await onA(admin).patch(`/v1/devices/${tracker.deviceId}`, { api_key_id: tracker.keyId })).status).toBe(200);
    expect(await deviceOfPointOnB()).toBe(tracker.deviceId);
    expect((await onA(admin).delete(`/v1/devices/${tracker.deviceId}`)).status).toBe(204);
    expect(await deviceOfPointOnB()).toBeUndefined();
  });

  it('a ban, then a deletion', async () => {
    const banned = await createUser(t.app);
    await expectCachedOnB(() => onB(banned.token).get('/v1/users/me'));
    expect((await onA(admin).post(`/v1/users/${banned.id}/ban`, { reason: 'spam' })).status).toBe(200);
    expect((await onB(banned.token).get('/v1/users/me')).status).toBe(401);

    const deleted = await createUser(t.app);
    await expectCachedOnB(() => onB(admin).get(`/v1/users/${deleted.id}`));
    expect((await onA(admin).delete(`/v1/users/${deleted.id}`)).status).toBe(204);
    expect((await onB(deleted.token).get('/v1/users/me')).status).toBe(401);
    expect((await onB(admin).get(`/v1/users/${deleted.id}`)).status).toBe(404);
  });

  it('an OAuth client: a regenerated secret, narrowed scopes, first-party status, deactivation, deletion', async () => {
    const created = await onA(admin)
      .post('/v1/oauth/clients', {
        name: 'Cached client',
        redirect_uris: ['https://rp.example.org/cb'],
        allowed_scopes: ['roles:read'],
      })
      .expect(201);
    const registered = created.body.client;
    const firstSecret = created.body.client_secret!;
    /** A client credentials grant on `app` (a form post, so sent as it is). */
    const grant = (app: FastifyInstance, secret: string, scope?: string) =>
      client(app).raw({
        method: 'POST',
        url: '/v1/oauth/token',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`${registered.id}:${secret}`).toString('base64')}`,
        },
        payload: new URLSearchParams({ grant_type: 'client_credentials', ...(scope ? { scope } : {}) }).toString(),
      });
    // Once node B has read the client, a grant costs it one statement: the token's insert.
    expect((await grant(nodeB, firstSecret, 'roles:read')).status).toBe(200);
    const before = statementsOnB();
    expect((await grant(nodeB, firstSecret, 'roles:read')).status).toBe(200);
    expect(statementsOnB() - before).toBe(1);

    const regenerated = await onA(admin).post(`/v1/oauth/clients/${registered.id}/regenerate-secret`).expect(200);
    const secret = regenerated.body.client_secret!;
    expect((await grant(nodeB, firstSecret)).body.error).toBe('invalid_client');
    expect((await grant(nodeB, secret, 'roles:read')).status).toBe(200);

    expect(
      (await onA(admin).patch(`/v1/oauth/clients/${registered.id}`, { allowed_scopes: ['users:read'] })).status,
    ).toBe(200);
    expect((await grant(nodeB, secret, 'roles:read')).body.error).toBe('invalid_scope');
    expect((await onA(admin).patch(`/v1/oauth/clients/${registered.id}`, { is_active: false })).status).toBe(200);
    expect((await grant(nodeB, secret)).body.error).toBe('invalid_client');
    expect((await onA(admin).patch(`/v1/oauth/clients/${registered.id}`, { is_active: true })).status).toBe(200);
    expect((await grant(nodeB, secret)).status).toBe(200);
    expect((await onA(admin).delete(`/v1/oauth/clients/${registered.id}`)).status).toBe(204);
    expect((await grant(nodeB, secret)).body.error).toBe('invalid_client');
    expect((await onB(admin).get(`/v1/oauth/clients/${registered.id}`)).status).toBe(404);

    // Made first-party (after which it cannot be changed or deleted): node B sees it at once.
    const other = (
      await onA(admin)
        .post('/v1/oauth/clients', { name: 'Cached client 2', redirect_uris: ['https://rp.example.org/cb'] })
        .expect(201)
    ).body.client.id;
    expect((await onB(admin).get(`/v1/oauth/clients/${other}`).expect(200)).body.is_first_party).toBe(false);
    expect((await onA(admin).patch(`/v1/oauth/clients/${other}`, { is_first_party: true })).status).toBe(200);
    expect((await onB(admin).get(`/v1/oauth/clients/${other}`).expect(200)).body.is_first_party).toBe(true);
  });

  it('a password reset ends the sessions', async () => {
    const user = await createUser(t.app);
    await expectCachedOnB(() => onB(user.token).get('/v1/users/me'));
    const email = `${user.username}@example.org`;
    expect((await t.as(null).post('/v1/auth/reset-password', { email })).status).toBe(200);
    await smtp.waitFor(email, () => smtp.received.some((mail) => mail.to === email));
    const token = tokenFromMail(smtp.received.filter((mail) => mail.to === email).at(-1)!);
    const done = await t
      .as(null)
      .post('/v1/auth/reset-password/complete', { token, new_password: 'another good password' });
    expect(done.status).toBe(200);
    expect((await onB(user.token).get('/v1/users/me')).status).toBe(401);
  });
});
