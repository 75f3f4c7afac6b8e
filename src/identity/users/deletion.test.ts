import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unchecked, type Client } from '../../../test/client.js';
import {
  adminIdOf,
  buildTestApp,
  createApiKey,
  createUser,
  login,
  TEST_ADMIN,
  TEST_SYSTEM_KEY,
  UNAUTHORIZED,
  UNKNOWN_ID,
  type TestApp,
} from '../../../test/helpers.js';
import { buildApp } from '../../app.js';
import { socketAs } from '../../../test/ws-client.js';

const DAY_MS = 86_400_000;

let t: TestApp;
let admin: string;
let adminId: string;
let api: Client;
beforeAll(async () => {
  t = await buildTestApp();
  t.clock.freeze();
  admin = await login(t.app, 'admin', TEST_ADMIN.password);
  adminId = await adminIdOf(t);
  api = t.as(admin);
});
afterAll(() => t.close());

const status = (id: string) => api.get(`/v1/admin/users/${id}/deletion-status`);
const remove = (id: string) => api.delete(`/v1/users/${id}`).expect(204);
const iso = (ms: number) => new Date(ms).toISOString();
/** The app on a real port, for WebSocket clients (listened on once, by whichever test needs it first). */
let base: Promise<string> | undefined;
const listening = () => (base ??= t.app.listen({ host: '127.0.0.1', port: 0 }));
const eventsOf = (userId: string) =>
  t.database.db.selectFrom('audit_events').selectAll().where('user_id', '=', userId).orderBy('created_at').execute();

describe('deletion status and cancel-deletion', () => {
  it('reports an active user, then a deleted one scheduled 7 days after the deletion', async () => {
    const user = await createUser(t.app);
    expect((await status(user.id)).body).toEqual({
      is_scheduled_for_deletion: false,
      scheduled_deletion_at: null,
      is_deleted: false,
      deleted_at: null,
    });
    const deletedAt = t.clock.nowMs();
    await remove(user.id);
    expect((await status(user.id)).body).toEqual({
      is_scheduled_for_deletion: true,
      scheduled_deletion_at: iso(deletedAt + 7 * DAY_MS),
      is_deleted: true,
      deleted_at: iso(deletedAt),
    });
    expect((await status(UNKNOWN_ID)).body).toEqual({
      error: 'NotFound',
      message: 'User not found',
      code: 'user.not_found',
    });
  });

  it('lists the users in the grace period with deleted=true, and only there', async () => {
    const [kept, deleted] = [await createUser(t.app), await createUser(t.app)];
    await remove(deleted.id);
    const idsOf = async (query: string) => {
      const response = await api.get(`/v1/users?limit=100${query}`).expect(200);
      return response.body.data.map((user) => [user.id, user.deleted_at]);
    };
    const pending = await idsOf('&deleted=true');
    expect(pending).toContainEqual([deleted.id, iso(t.clock.nowMs())]);
    expect(pending.map(([id]) => id)).not.toContain(kept.id);
    const active = (await idsOf('')).map(([id]) => id);
    expect(active).toContain(kept.id);
    expect(active).not.toContain(deleted.id);
    expect(await idsOf('&deleted=false')).toEqual(await idsOf(''));
    const bad = await api.get('/v1/users?deleted=maybe').expect(400);
    expect(bad.body.message).toMatch(/deleted/);
  });

  it('restores the user within the grace period; the ended sessions stay ended', async () => {
    const user = await createUser(t.app);
    await remove(user.id);
    expect((await t.as(user.token).get('/v1/users/me')).body).toEqual(UNAUTHORIZED);
    const cancelled = await api.post(`/v1/admin/users/${user.id}/cancel-deletion`);
    expect({ status: cancelled.status, body: cancelled.body }).toEqual({
      status: 200,
      body: { success: true, message: 'Deletion cancelled; the user is active again' },
    });
    expect((await status(user.id)).body).toMatchObject({ is_scheduled_for_deletion: false, is_deleted: false });
    expect((await t.as(user.token).get('/v1/users/me')).status).toBe(401);
    expect((await login(t.app, user.username, user.password)).startsWith('ses_')).toBe(true);

    const again = await api.post(`/v1/admin/users/${user.id}/cancel-deletion`);
    expect({ status: again.status, body: again.body }).toEqual({
      status: 400,
      body: {
        error: 'BadRequest',
        message: 'The user is not scheduled for deletion',
        code: 'user.not_scheduled_for_deletion',
      },
    });
    expect((await api.post(`/v1/admin/users/${UNKNOWN_ID}/cancel-deletion`)).status).toBe(404);
  });

  it('guards each route with its permission', async () => {
    const user = await createUser(t.app);
    const other = await createUser(t.app);
    const asUser = t.as(user.token);
    expect((await asUser.get(`/v1/admin/users/${other.id}/deletion-status`)).status).toBe(403);
    expect((await asUser.post(`/v1/admin/users/${other.id}/cancel-deletion`)).status).toBe(403);
    expect((await asUser.post(`/v1/admin/users/${other.id}/force-delete`, { reason: 'x' })).status).toBe(403);
    expect((await t.as(null).post(`/v1/admin/users/${other.id}/force-delete`, { reason: 'x' })).status).toBe(401);
  });
});

describe('DELETE /v1/users/{id}', () => {
  it("tells the user's open apps to sign out and disconnects them", async () => {
    const user = await createUser(t.app);
    const openApp = await socketAs(await listening(), user.token);
    await remove(user.id);
    expect(await openApp.next('forceLogout')).toEqual({ type: 'forceLogout', reason: 'account_deleted' });
    expect((await openApp.closed).code).toBe(4001);
  });
});

describe('the purge', () => {
  it('removes users past the grace period, keeps younger ones, and pseudonymises the audit trail', async () => {
    const due = await createUser(t.app);
    const young = await createUser(t.app);
    const sent = await t.database.db
      .insertInto('gps_points')
      .values({
        sent_by: due.id,
        latitude: 54,
        longitude: 10,
        timestamp: new Date('2026-11-01T00:00:00Z'),
        speed_kmh: 0,
        speed_mps: 0,
        speed_mph: 0,
        speed_knots: 0,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    await remove(due.id);
    t.clock.advance(2 * DAY_MS);
    await remove(young.id);
    t.clock.advance(5 * DAY_MS + 1);

    const { deleted_users } = await t.app.services.purgeExpired();
    expect(deleted_users).toBeGreaterThanOrEqual(1);
    expect((await status(due.id)).status).toBe(404);
    expect((await status(young.id)).body).toMatchObject({ is_scheduled_for_deletion: true });
    const accounts = await t.database.db
      .selectFrom('platform_accounts')
      .select('id')
      .where('user_id', '=', due.id)
      .execute();
    expect(accounts).toEqual([]);

    const events = await eventsOf(due.id);
    expect(events.map((e) => e.event_type)).toEqual(['login', 'user_deleted', 'user_deleted']);
    expect(events.every((e) => e.ip_address === null && e.user_agent === null)).toBe(true);
    expect(events[2]).toMatchObject({
      actor_id: null,
      metadata: {
        permanent: true,
        reason: 'grace period over',
        sessions_ended: 0,
        api_keys_removed: 0,
        audit_events_pseudonymised: 2,
        gps_points_unattributed: 1,
      },
    });
    // The point stays (tracking data is the installation's) and no longer leads to anybody.
    expect(
      await t.database.db.selectFrom('gps_points').select('sent_by').where('id', '=', sent.id).executeTakeFirst(),
    ).toEqual({ sent_by: null });
    // The name is free again once nothing of its holder is left.
    const reused = await t
      .as(null)
      .post('/v1/auth/register', { email: 'new@example.org', username: due.username, password: 'password-123' });
    expect(reused.status).not.toBe(409);
  });

  it('purges each due user exactly once when two nodes run it at the same time', async () => {
    const users = await Promise.all(Array.from({ length: 6 }, () => createUser(t.app)));
    for (const user of users) await remove(user.id);
    t.clock.advance(7 * DAY_MS + 1);
    const second = await buildApp(t.config, { database: t.database, kv: t.kv, clock: t.clock }, { logger: false });
    try {
      const counts = await Promise.all([t.app.services.users.purgeDue(), second.services.users.purgeDue()]);
      expect(counts[0] + counts[1]).toBeGreaterThanOrEqual(users.length);
    } finally {
      await second.close();
    }
    for (const user of users) {
      const purges = (await eventsOf(user.id)).filter((e) => (e.metadata as { permanent?: boolean }).permanent);
      expect(purges).toHaveLength(1);
      expect((await status(user.id)).status).toBe(404);
    }
  });
});

describe('POST /v1/admin/users/{id}/force-delete', () => {
  it("tells an active user's open apps to sign out and disconnects them", async () => {
    const user = await createUser(t.app);
    const openApp = await socketAs(await listening(), user.token);
    await api.post(`/v1/admin/users/${user.id}/force-delete`, { reason: 'requested by the user' }).expect(200);
    expect(await openApp.next('forceLogout')).toEqual({ type: 'forceLogout', reason: 'account_deleted' });
    expect((await openApp.closed).code).toBe(4001);
  });

  it('removes an active user at once: sessions and keys end, a system key passes to the installation', async () => {
    const user = await createUser(t.app, ['role_user', 'role_developer', 'role_api_read_only']);
    const own = await createApiKey(t.app, user.token, { name: 'own', scopes: ['gps:read'] });
    // The admin signed in days ago on this test's clock (other tests move it): the password shows it is them.
    const system = await createApiKey(t.app, admin, {
      name: 'installation',
      scopes: ['gps:read'],
      is_system: true,
      current_password: TEST_ADMIN.password,
    });
    await t.database.db.updateTable('api_keys').set({ user_id: user.id }).where('id', '=', system.id).execute();

    const response = await api.post(`/v1/admin/users/${user.id}/force-delete`, { reason: 'requested by the user' });
    expect({ status: response.status, body: response.body }).toEqual({
      status: 200,
      body: { success: true, message: 'User permanently deleted' },
    });
    expect((await status(user.id)).status).toBe(404);
    expect((await t.as(user.token).get('/v1/users/me')).body).toEqual(UNAUTHORIZED);
    expect((await t.as(own.key).get('/v1/gps')).body).toEqual(UNAUTHORIZED);
    await t
      .as(system.key)
      .get(`/v1/users/email/${encodeURIComponent(TEST_ADMIN.email)}`)
      .expect(200);
    expect(
      await t.database.db
        .selectFrom('api_keys')
        .select(['user_id', 'is_active'])
        .where('id', '=', system.id)
        .executeTakeFirst(),
    ).toEqual({ user_id: null, is_active: true });
    const [event] = (await eventsOf(user.id)).filter((e) => e.event_type === 'user_deleted');
    expect(event).toMatchObject({
      actor_id: adminId,
      metadata: { permanent: true, reason: 'requested by the user', sessions_ended: 1, api_keys_removed: 1 },
    });
  });

  it('needs a reason, answers 404 for an unknown user, and keeps the last super admin', async () => {
    const user = await createUser(t.app);
    const missing = await api.post(`/v1/admin/users/${user.id}/force-delete`, unchecked({})).expect(400);
    expect(missing.body.message).toContain('reason');
    expect((await api.post(`/v1/admin/users/${UNKNOWN_ID}/force-delete`, { reason: 'x' })).body).toMatchObject({
      code: 'user.not_found',
    });
    const self = await api.post(`/v1/admin/users/${adminId}/force-delete`, { reason: 'x' }).expect(409);
    expect({ status: self.status, code: self.body.code }).toEqual({ status: 409, code: 'user.last_super_admin' });
    const upper = await api.post(`/v1/admin/users/${adminId.toUpperCase()}/force-delete`, { reason: 'x' }).expect(409);
    expect({ status: upper.status, code: upper.body.code }).toEqual({
      status: 409,
      code: 'user.last_super_admin',
    });
    expect((await t.as(TEST_SYSTEM_KEY).post(`/v1/admin/users/${user.id}/force-delete`, { reason: 'x' })).status).toBe(
      403,
    );
  });
});
