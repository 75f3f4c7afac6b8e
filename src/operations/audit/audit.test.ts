import { createHmac, randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, unchecked, type RequestBody } from '../../../test/client.js';
import type { FakeSmtp } from '../../../test/fakes/smtp.js';
import {
  buildMailingTestApp,
  createApiKey,
  createRoleWith,
  createUser,
  forbidden,
  login,
  ownerlessKey,
  TEST_ADMIN,
  TEST_SYSTEM_KEY,
  UNAUTHORIZED,
  type TestApp,
} from '../../../test/helpers.js';
import { buildApp } from '../../app.js';

const APP_SECRETS = { id: 'id-app-secret-for-audit-tests-0123', backend: 'backend-app-secret-for-audit-tests' };

let t: TestApp;
let smtp: FakeSmtp;
let admin: string;
beforeAll(async () => {
  ({ t, smtp } = await buildMailingTestApp({ config: { internalAppSecrets: APP_SECRETS } }));
  admin = await login(t.app, 'admin', TEST_ADMIN.password);
});
afterAll(() => t.close());

/** Mints X-ID-App-Assertion as an internal app would: its own HMAC, independent of the service's code. */
function assertion(
  subject: string,
  fields: { app?: string; secret?: string; issuedAt?: number; nonce?: string } = {},
): string {
  const app = fields.app ?? 'id';
  const issuedAt = String(fields.issuedAt ?? Math.floor(t.clock.nowMs() / 1000));
  const nonce = fields.nonce ?? `idaa_${randomUUID().replaceAll('-', '')}`;
  const secret = fields.secret ?? APP_SECRETS[app as keyof typeof APP_SECRETS] ?? 'no-secret';
  const mac = createHmac('sha256', secret).update(`${app}|${subject}|${issuedAt}|${nonce}`).digest('base64url');
  return [app, subject, issuedAt, nonce, mac].join('.');
}

/** An event of this user written through the internal route (the system key may attribute freely). */
async function eventOf(userId: string, fields: Partial<RequestBody<'post', '/v1/internal/audit'>> = {}) {
  const response = await t
    .as(TEST_SYSTEM_KEY)
    .post('/v1/internal/audit', { event_type: 'user_updated', user_id: userId, ...fields })
    .expect(201);
  return response.body;
}

describe('GET /v1/users/me/audit', () => {
  it('answers 403 auth.user_required to a credential that belongs to no user, on every "own" route', async () => {
    const key = await ownerlessKey(t, ['audit:read_own', 'audit:report_own']);
    const api = t.as(key);
    const report = `/v1/users/me/audit/${randomUUID()}/report` as const;
    for (const [url, response] of [
      ['/v1/users/me/audit', await api.get('/v1/users/me/audit')],
      ['/v1/users/me/audit/reports', await api.get('/v1/users/me/audit/reports')],
      [report, await api.post(report, { reason: 'other' })],
    ] as const) {
      expect({ url, status: response.status, body: response.body }).toEqual({
        url,
        status: 403,
        body: { error: 'Forbidden', message: 'This credential does not belong to a user', code: 'auth.user_required' },
      });
    }
  });

  it("lists the caller's own events, newest first, in the interface's list shape", async () => {
    const user = await createUser(t.app);
    const other = await createUser(t.app);
    await eventOf(other.id);
    const updated = await eventOf(user.id, {
      resource_type: 'user',
      resource_id: user.id,
      metadata: { field: 'username' },
    });

    const response = await t
      .as(user.token)
      .get('/v1/users/me/audit', { query: { limit: 1 } })
      .expect(200);
    expect(response.body).toEqual({
      events: [
        {
          id: updated.id,
          user_id: user.id,
          event_type: 'user_updated',
          resource_type: 'user',
          resource_id: user.id,
          actor_id: null,
          ip_address: '127.0.0.1',
          user_agent: 'lightMyRequest',
          description: null,
          metadata: { field: 'username' },
          status: 'success',
          error_message: null,
          source_service: 'api',
          created_at: updated.created_at,
          is_reported: false,
        },
      ],
      // The sign-in of createUser and the event above.
      total_count: 2,
      page: 1,
      limit: 1,
      total_pages: 2,
      _links: {
        self: 'http://localhost/v1/users/me/audit?limit=1&page=1',
        first: 'http://localhost/v1/users/me/audit?limit=1&page=1',
        next: 'http://localhost/v1/users/me/audit?limit=1&page=2',
        last: 'http://localhost/v1/users/me/audit?limit=1&page=2',
      },
    });
    const second = (
      await t
        .as(user.token)
        .get('/v1/users/me/audit', { query: { limit: 1, page: 2 } })
        .expect(200)
    ).body;
    expect(second.events.map((e) => e.event_type)).toEqual(['login']);
  });

  it('filters by event_type, resource_type and status', async () => {
    const user = await createUser(t.app);
    await eventOf(user.id, { event_type: 'login_failed', status: 'failure', resource_type: 'device' });
    await eventOf(user.id, { event_type: 'user_updated', resource_type: 'user' });
    const types = async (query: string) =>
      (await t.as(user.token).get(`/v1/users/me/audit?${query}`).expect(200)).body.events.map((e) => e.event_type);
    expect(await types('status=failure')).toEqual(['login_failed']);
    expect(await types('event_type=user_updated')).toEqual(['user_updated']);
    expect(await types('resource_type=device')).toEqual(['login_failed']);
    expect((await t.as(user.token).get('/v1/users/me/audit?status=maybe')).status).toBe(400);
    expect((await t.as(user.token).get('/v1/users/me/audit', { query: { limit: 101 } })).status).toBe(400);
  });

  it('answers 401 without a credential', async () => {
    const response = await t.as(null).get('/v1/users/me/audit');
    expect(response.status).toBe(401);
    expect(response.body).toEqual(UNAUTHORIZED);
  });
});

describe('GET /v1/users/{user_id}/audit', () => {
  it("needs audit:read and lists that user's events", async () => {
    const user = await createUser(t.app);
    const other = await createUser(t.app);
    const event = await eventOf(other.id);
    const refused = await t.as(user.token).get(`/v1/users/${other.id}/audit`);
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual(forbidden('audit:read'));
    const listed = (await t.as(admin).get(`/v1/users/${other.id}/audit`).expect(200)).body;
    expect(listed.events[0]!.id).toBe(event.id);
    expect(listed.events.every((e) => e.user_id === other.id)).toBe(true);
  });
});

describe('GET /v1/admin/audit', () => {
  it('counts totals exactly up to 10,000 and estimates beyond, saying so in a header', async () => {
    const type = `bulk_${randomUUID().slice(0, 8)}`;
    await sql`insert into audit_events (event_type, status, source_service, metadata)
      select ${type}, 'success', 'api', '{}' from generate_series(1, 10050)`.execute(t.database.db);
    await sql`analyze audit_events`.execute(t.database.db);
    const large = await t
      .as(admin)
      .get('/v1/admin/audit', { query: { event_type: type, limit: 100 } })
      .expect(200);
    expect(large.headers['x-total-count-estimated']).toBe('true');
    expect(large.body.total_count).toBeGreaterThan(10_000);
    expect(large.body.events).toHaveLength(100);

    const small = await t
      .as(admin)
      .get('/v1/admin/audit', { query: { event_type: type, status: 'failure' } })
      .expect(200);
    expect(small.headers['x-total-count-estimated']).toBeUndefined();
    expect(small.body.total_count).toBe(0);
  });

  it('finds the events of a user by id, username or email', async () => {
    const user = await createUser(t.app);
    const event = await eventOf(user.id, { event_type: 'account_linked' });
    for (const term of [user.id, user.username.toUpperCase(), `${user.username}@example.org`]) {
      const body = (
        await t
          .as(admin)
          .get('/v1/admin/audit', { query: { user_search: term, event_type: 'account_linked' } })
          .expect(200)
      ).body;
      expect(body.events.map((e) => e.id)).toEqual([event.id]);
    }
    const nobody = (await t.as(admin).get('/v1/admin/audit', { query: { user_search: 'nobody_at_all' } })).body;
    expect(nobody).toMatchObject({ events: [], total_count: 0, total_pages: 1 });
  });

  it('filters by source, time range and report, and sorts by a field', async () => {
    const user = await createUser(t.app);
    await eventOf(user.id, { event_type: 'bot_command_executed', source_service: 'community_bot', status: 'failure' });
    const early = await eventOf(user.id, { event_type: 'user_updated' });
    t.clock.advance(2 * 86_400_000);
    const late = await eventOf(user.id, { event_type: 'api_key_created' });
    const ids = async (query: string) =>
      (await t.as(admin).get(`/v1/admin/audit?user_id=${user.id}&${query}`).expect(200)).body.events.map((e) => e.id);

    expect((await ids('source_service=community_bot')).length).toBe(1);
    expect(await ids(`start_date=${encodeURIComponent(late.created_at)}`)).toEqual([late.id]);
    expect(await ids(`end_date=${early.created_at.slice(0, 10)}&event_type=user_updated`)).toEqual([early.id]);
    const sorted = (
      await t
        .as(admin)
        .get('/v1/admin/audit', { query: { user_id: user.id, sort_field: 'event_type', sort_direction: 'asc' } })
        .expect(200)
    ).body;
    const types = sorted.events.map((e) => e.event_type);
    expect(types).toEqual([...types].sort());

    await t.as(user.token).post(`/v1/users/me/audit/${early.id}/report`, { reason: 'not_me' });
    expect(await ids('is_reported=true')).toEqual([early.id]);
    expect(await ids('is_reported=false')).not.toContain(early.id);
  });

  it('answers 400 naming a bad date or sort field', async () => {
    const bad = await t.as(admin).get('/v1/admin/audit', { query: { start_date: 'yesterday' } });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({
      error: 'BadRequest',
      message: 'start_date must be an ISO 8601 date or date-time',
      code: 'audit.invalid_date',
    });
    // Days a month does not have: Date.parse would roll them over into the next month.
    for (const [field, date] of [
      ['start_date', '2026-02-31'],
      ['end_date', '2026-04-31T10:00:00Z'],
      ['end_date', '2025-02-29'],
    ]) {
      const impossible = await t.as(admin).get(`/v1/admin/audit?${field}=${date}`);
      expect({ status: impossible.status, body: impossible.body }).toEqual({
        status: 400,
        body: {
          error: 'BadRequest',
          message: `${field} must be an ISO 8601 date or date-time`,
          code: 'audit.invalid_date',
        },
      });
    }
    expect((await t.as(admin).get('/v1/admin/audit', { query: { start_date: '2028-02-29' } })).status).toBe(200);
    const sort = await t.as(admin).get('/v1/admin/audit?sort_field=ip_address').expect(400);
    expect(sort.body.message).toContain('sort_field');
  });
});

describe('audit reports', () => {
  it('a user reports one of their own events once; the report shows on the event', async () => {
    const user = await createUser(t.app);
    const event = await eventOf(user.id);
    const api = t.as(user.token);
    const filed = await api.post(`/v1/users/me/audit/${event.id}/report`, {
      reason: 'suspicious',
      description: 'not from here',
    });
    expect(filed.status).toBe(201);
    expect(filed.body).toEqual({
      success: true,
      error: null,
      report: {
        id: expect.any(String),
        audit_event_id: event.id,
        user_id: user.id,
        reason: 'suspicious',
        description: 'not from here',
        status: 'pending',
        reviewed_by: null,
        reviewed_at: null,
        resolution_notes: null,
        created_at: expect.any(String),
        updated_at: expect.any(String),
      },
    });
    const again = await api.post(`/v1/users/me/audit/${event.id}/report`, { reason: 'other' }).expect(409);
    expect(again.body.code).toBe('audit_report.already_reported');
    const mine = (await api.get('/v1/users/me/audit/reports').expect(200)).body;
    expect(mine.map((r) => r.audit_event_id)).toEqual([event.id]);
    const listed = (await api.get('/v1/users/me/audit', { query: { event_type: 'user_updated' } }).expect(200)).body;
    expect(listed.events[0]!.is_reported).toBe(true);
  });

  it("answers 404 for another user's event and 400 for an unknown reason", async () => {
    const user = await createUser(t.app);
    const other = await createUser(t.app);
    const event = await eventOf(other.id);
    const response = await t.as(user.token).post(`/v1/users/me/audit/${event.id}/report`, { reason: 'not_me' });
    expect(response.status).toBe(404);
    expect(response.body).toEqual({
      error: 'NotFound',
      message: 'Audit event not found',
      code: 'audit.event_not_found',
    });
    const reason = await t
      .as(other.token)
      .post(`/v1/users/me/audit/${event.id}/report`, unchecked({ reason: 'bored' }))
      .expect(400);
    expect(reason.body.message).toContain('reason');
  });

  it("an admin's review sets status, notes, reviewer and time, and mails the reporting user in their locale", async () => {
    const user = await createUser(t.app);
    await t.as(user.token).patch(`/v1/users/${user.id}/locale`, { locale: 'de' });
    const event = await eventOf(user.id);
    const report = (
      await t.as(user.token).post(`/v1/users/me/audit/${event.id}/report`, { reason: 'unknown_device' }).expect(201)
    ).body.report!;

    const pending = (
      await t
        .as(admin)
        .get('/v1/admin/audit/reports', { query: { status: 'pending' } })
        .expect(200)
    ).body;
    expect(pending.map((r) => r.id)).toContain(report.id);
    expect((await t.as(user.token).get('/v1/admin/audit/reports')).status).toBe(403);

    const adminId = (await t.as(admin).get('/v1/users/me').expect(200)).body.data.id;
    const reviewed = await t
      .as(admin)
      .patch(`/v1/admin/audit/reports/${report.id}`, { status: 'resolved', resolution_notes: 'Key rotated' });
    expect(reviewed.status).toBe(200);
    expect(reviewed.body).toEqual({
      ...report,
      status: 'resolved',
      resolution_notes: 'Key rotated',
      reviewed_by: adminId,
      reviewed_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
      updated_at: expect.any(String),
    });
    const mail = await smtp.waitFor(`${user.username}@example.org`, (m) => m.subject.includes('Aktivitätsmeldung'));
    expect(mail.text).toContain('Ihr Status ist jetzt: resolved');
    expect(mail.text).toContain('Key rotated');
    expect(
      (
        await t
          .as(admin)
          .get('/v1/admin/audit/reports', { query: { status: 'pending' } })
          .expect(200)
      ).body.map((r) => r.id),
    ).not.toContain(report.id);

    const missing = await t.as(admin).patch(`/v1/admin/audit/reports/${randomUUID()}`, { status: 'dismissed' });
    expect(missing.status).toBe(404);
    expect((await t.as(admin).patch(`/v1/admin/audit/reports/${report.id}`, unchecked({}))).status).toBe(400);
  });
});

describe('POST /v1/internal/audit', () => {
  /** An event sent with the token given (none when null), as it is: some are wrong on purpose. */
  const post = (token: string | null, body: object) => t.as(token).post('/v1/internal/audit', unchecked(body));
  /** An event sent by an internal app: its key, and the headers given (an assertion). */
  const fromApp = (body: object, headers: Record<string, string>) =>
    t.as(null).post('/v1/internal/audit', unchecked(body), { headers });

  it('takes events from the system key: bots may name external users, the API must name real ones', async () => {
    const bot = await post(TEST_SYSTEM_KEY, {
      event_type: 'bot_command_executed',
      user_id: '123456789012345678',
      source_service: 'community_bot',
      metadata: { command: '/ping' },
    });
    expect(bot.status).toBe(201);
    expect(bot.body).toMatchObject({
      user_id: '123456789012345678',
      source_service: 'community_bot',
      metadata: { command: '/ping' },
      actor_id: null,
    });
    const unknown = await post(TEST_SYSTEM_KEY, { event_type: 'user_updated', user_id: randomUUID() });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toEqual({
      error: 'BadRequest',
      message: 'user_id does not name an existing user',
      code: 'audit.unknown_user',
    });
    const external = await post(TEST_SYSTEM_KEY, { event_type: 'user_updated', user_id: 'discord:42' });
    expect(external.status).toBe(400);
    const actor = await post(TEST_SYSTEM_KEY, {
      event_type: 'user_updated',
      actor_id: randomUUID(),
      source_service: 'stream_bot',
    }).expect(400);
    expect(actor.body.code).toBe('audit.unknown_actor');
    const type = await post(TEST_SYSTEM_KEY, { event_type: 'made_up' }).expect(400);
    expect(type.body.message).toContain('event_type');
  });

  it('takes events from a credential with audit:write, and refuses one without it', async () => {
    const user = await createUser(t.app);
    const role = await createRoleWith(t.app, `audit_writer_${randomUUID().slice(0, 8)}`, ['audit:write']);
    const writer = await createUser(t.app, [role]);
    // The admin signed in days ago on this test's clock (other tests move it): the password shows it is them.
    const key = (
      await createApiKey(t.app, admin, {
        name: 'audit writer',
        scopes: ['audit:write'],
        current_password: TEST_ADMIN.password,
      })
    ).key;
    expect((await post(key, { event_type: 'user_updated', user_id: user.id })).status).toBe(201);
    expect((await post(writer.token, { event_type: 'user_updated', user_id: user.id, actor_id: user.id })).status).toBe(
      201,
    );
    const refused = await post(user.token, { event_type: 'user_updated', user_id: user.id });
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual(forbidden('audit:write'));
    // Without credentials, even an empty or invalid body answers 401, not a validation error.
    for (const body of [{ event_type: 'user_updated' }, {}, { event_type: 42 }]) {
      const anonymous = await post(null, body).expect(401);
      expect(anonymous.body.code).toBe('audit.credentials_required');
    }
  });

  it("an internal app attributes an event to an end user with X-ID-App-Assertion, and keeps the user's address", async () => {
    const user = await createUser(t.app);
    const response = await fromApp(
      { event_type: 'consent_granted', ip_address: '203.0.113.9', user_agent: 'Firefox' },
      { 'x-id-app-key': APP_SECRETS.id, 'x-id-app-assertion': assertion(user.id) },
    );
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({
      user_id: user.id,
      actor_id: user.id,
      source_service: 'id',
      ip_address: '203.0.113.9',
      user_agent: 'Firefox',
    });

    const noAssertion = await fromApp(
      { event_type: 'consent_granted', actor_id: user.id },
      { 'x-id-app-key': APP_SECRETS.id },
    ).expect(403);
    expect(noAssertion.body.code).toBe('audit.actor_needs_assertion');
    const otherApp = await fromApp(
      { event_type: 'consent_granted' },
      { 'x-id-app-key': APP_SECRETS.backend, 'x-id-app-assertion': assertion(user.id) },
    ).expect(403);
    expect(otherApp.body.code).toBe('audit.app_mismatch');
    const mismatch = await fromApp(
      { event_type: 'consent_granted', actor_id: randomUUID() },
      { 'x-id-app-key': APP_SECRETS.id, 'x-id-app-assertion': assertion(user.id) },
    );
    expect((mismatch.body as { code?: string }).code).toBe('audit.actor_mismatch');
    const badKey = await fromApp({ event_type: 'consent_granted' }, { 'x-id-app-key': 'not-a-secret' });
    expect(badKey.status).toBe(401);
  });

  it.each([
    ['an unknown app', (id: string) => assertion(id, { app: 'billing', secret: 'x' }), 'app_assertion.unknown_app'],
    ['an app without a secret', (id: string) => assertion(id, { app: 'policies' }), 'app_assertion.unknown_app'],
    ['a malformed subject', () => assertion('not-a-uuid'), 'app_assertion.malformed'],
    ['a subject signed in upper case', (id: string) => assertion(id.toUpperCase()), 'app_assertion.bad_signature'],
    ['a wrong key', (id: string) => assertion(id, { secret: APP_SECRETS.backend }), 'app_assertion.bad_signature'],
    [
      'a stale assertion',
      (id: string) => assertion(id, { issuedAt: Math.floor(t.clock.nowMs() / 1000) - 31 }),
      'app_assertion.expired',
    ],
    [
      'one from the future',
      (id: string) => assertion(id, { issuedAt: Math.floor(t.clock.nowMs() / 1000) + 60 }),
      'app_assertion.not_yet_valid',
    ],
  ])('refuses %s with 401', async (_case, mint, code) => {
    const user = await createUser(t.app);
    const response = await fromApp(
      { event_type: 'consent_granted' },
      { 'x-id-app-key': APP_SECRETS.id, 'x-id-app-assertion': mint(user.id) },
    ).expect(401);
    expect(response.body.code).toBe(code);
  });

  it('accepts an assertion once, on any node', async () => {
    const user = await createUser(t.app);
    const header = assertion(user.id);
    const headers = { 'x-id-app-key': APP_SECRETS.id, 'x-id-app-assertion': header };
    expect((await fromApp({ event_type: 'consent_granted' }, headers)).status).toBe(201);
    const replay = await fromApp({ event_type: 'consent_granted' }, headers).expect(401);
    expect(replay.body.code).toBe('app_assertion.replayed');

    // A second node on the same database and key-value store refuses it too, and a fresh one from it once.
    const node = await buildApp(t.config, { database: t.database, kv: t.kv, clock: t.clock }, { logger: false });
    try {
      const onNode = client(node, null);
      const elsewhere = await onNode.post('/v1/internal/audit', { event_type: 'consent_granted' }, { headers });
      expect((elsewhere.body as { code?: string }).code).toBe('app_assertion.replayed');
      const fresh = { ...headers, 'x-id-app-assertion': assertion(user.id) };
      expect(
        (await onNode.post('/v1/internal/audit', { event_type: 'consent_granted' }, { headers: fresh })).status,
      ).toBe(201);
      expect((await fromApp({ event_type: 'consent_granted' }, fresh)).status).toBe(401);
    } finally {
      await node.close();
    }
  });
});
