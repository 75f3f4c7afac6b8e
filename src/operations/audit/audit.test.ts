import { createHmac, randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeSmtp } from '../../../test/fakes/smtp.js';
import {
  bearer,
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

const get = (url: string, token?: string) => t.app.inject({ method: 'GET', url, headers: token ? bearer(token) : {} });
const send = (method: 'POST' | 'PATCH', url: string, payload: object, headers: Record<string, string> = {}) =>
  t.app.inject({ method, url, payload, headers });

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
async function eventOf(userId: string, fields: Record<string, unknown> = {}) {
  const response = await send(
    'POST',
    '/v1/internal/audit',
    { event_type: 'user_updated', user_id: userId, ...fields },
    bearer(TEST_SYSTEM_KEY),
  );
  expect(response.statusCode).toBe(201);
  return response.json() as { id: string; created_at: string };
}

describe('GET /v1/users/me/audit', () => {
  it('answers 403 auth.user_required to a credential that belongs to no user, on every "own" route', async () => {
    const key = await ownerlessKey(t, ['audit:read_own', 'audit:report_own']);
    for (const [method, url] of [
      ['GET', '/v1/users/me/audit'],
      ['GET', '/v1/users/me/audit/reports'],
      ['POST', `/v1/users/me/audit/${randomUUID()}/report`],
    ] as const) {
      const response = await t.app.inject({
        method,
        url,
        headers: bearer(key),
        ...(method === 'POST' ? { payload: { reason: 'other' } } : {}),
      });
      expect({ url, status: response.statusCode, body: response.json() }).toEqual({
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

    const response = await get('/v1/users/me/audit?limit=1', user.token);
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body).toEqual({
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
    const second = (await get('/v1/users/me/audit?limit=1&page=2', user.token)).json();
    expect(second.events.map((e: { event_type: string }) => e.event_type)).toEqual(['login']);
  });

  it('filters by event_type, resource_type and status', async () => {
    const user = await createUser(t.app);
    await eventOf(user.id, { event_type: 'login_failed', status: 'failure', resource_type: 'device' });
    await eventOf(user.id, { event_type: 'user_updated', resource_type: 'user' });
    const types = async (query: string) =>
      (await get(`/v1/users/me/audit?${query}`, user.token))
        .json()
        .events.map((e: { event_type: string }) => e.event_type);
    expect(await types('status=failure')).toEqual(['login_failed']);
    expect(await types('event_type=user_updated')).toEqual(['user_updated']);
    expect(await types('resource_type=device')).toEqual(['login_failed']);
    expect((await get('/v1/users/me/audit?status=maybe', user.token)).statusCode).toBe(400);
    expect((await get('/v1/users/me/audit?limit=101', user.token)).statusCode).toBe(400);
  });

  it('answers 401 without a credential', async () => {
    const response = await get('/v1/users/me/audit');
    expect(response.statusCode).toBe(401);
    expect(response.json()).toEqual(UNAUTHORIZED);
  });
});

describe('GET /v1/users/{user_id}/audit', () => {
  it("needs audit:read and lists that user's events", async () => {
    const user = await createUser(t.app);
    const other = await createUser(t.app);
    const event = await eventOf(other.id);
    const refused = await get(`/v1/users/${other.id}/audit`, user.token);
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toEqual(forbidden('audit:read'));
    const listed = (await get(`/v1/users/${other.id}/audit`, admin)).json();
    expect(listed.events[0].id).toBe(event.id);
    expect(listed.events.every((e: { user_id: string }) => e.user_id === other.id)).toBe(true);
  });
});

describe('GET /v1/admin/audit', () => {
  it('counts totals exactly up to 10,000 and estimates beyond, saying so in a header', async () => {
    const type = `bulk_${randomUUID().slice(0, 8)}`;
    await sql`insert into audit_events (event_type, status, source_service, metadata)
      select ${type}, 'success', 'api', '{}' from generate_series(1, 10050)`.execute(t.database.db);
    await sql`analyze audit_events`.execute(t.database.db);
    const large = await get(`/v1/admin/audit?event_type=${type}&limit=100`, admin);
    expect(large.statusCode).toBe(200);
    expect(large.headers['x-total-count-estimated']).toBe('true');
    expect(large.json().total_count).toBeGreaterThan(10_000);
    expect(large.json().events).toHaveLength(100);

    const small = await get(`/v1/admin/audit?event_type=${type}&status=failure`, admin);
    expect(small.headers['x-total-count-estimated']).toBeUndefined();
    expect(small.json().total_count).toBe(0);
  });

  it('finds the events of a user by id, username or email', async () => {
    const user = await createUser(t.app);
    const event = await eventOf(user.id, { event_type: 'account_linked' });
    for (const term of [user.id, user.username.toUpperCase(), `${user.username}@example.org`]) {
      const body = (
        await get(`/v1/admin/audit?user_search=${encodeURIComponent(term)}&event_type=account_linked`, admin)
      ).json();
      expect(body.events.map((e: { id: string }) => e.id)).toEqual([event.id]);
    }
    const nobody = (await get('/v1/admin/audit?user_search=nobody_at_all', admin)).json();
    expect(nobody).toMatchObject({ events: [], total_count: 0, total_pages: 1 });
  });

  it('filters by source, time range and report, and sorts by a field', async () => {
    const user = await createUser(t.app);
    await eventOf(user.id, { event_type: 'bot_command_executed', source_service: 'community_bot', status: 'failure' });
    const early = await eventOf(user.id, { event_type: 'user_updated' });
    t.clock.advance(2 * 86_400_000);
    const late = await eventOf(user.id, { event_type: 'api_key_created' });
    const ids = async (query: string) =>
      (await get(`/v1/admin/audit?user_id=${user.id}&${query}`, admin)).json().events.map((e: { id: string }) => e.id);

    expect((await ids('source_service=community_bot')).length).toBe(1);
    expect(await ids(`start_date=${encodeURIComponent(late.created_at)}`)).toEqual([late.id]);
    expect(await ids(`end_date=${early.created_at.slice(0, 10)}&event_type=user_updated`)).toEqual([early.id]);
    const sorted = (
      await get(`/v1/admin/audit?user_id=${user.id}&sort_field=event_type&sort_direction=asc`, admin)
    ).json();
    const types = sorted.events.map((e: { event_type: string }) => e.event_type);
    expect(types).toEqual([...types].sort());

    await send('POST', `/v1/users/me/audit/${early.id}/report`, { reason: 'not_me' }, bearer(user.token));
    expect(await ids('is_reported=true')).toEqual([early.id]);
    expect(await ids('is_reported=false')).not.toContain(early.id);
  });

  it('answers 400 naming a bad date or sort field', async () => {
    const bad = await get('/v1/admin/audit?start_date=yesterday', admin);
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toEqual({
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
      const impossible = await get(`/v1/admin/audit?${field}=${date}`, admin);
      expect({ status: impossible.statusCode, body: impossible.json() }).toEqual({
        status: 400,
        body: {
          error: 'BadRequest',
          message: `${field} must be an ISO 8601 date or date-time`,
          code: 'audit.invalid_date',
        },
      });
    }
    expect((await get('/v1/admin/audit?start_date=2028-02-29', admin)).statusCode).toBe(200);
    const sort = await get('/v1/admin/audit?sort_field=ip_address', admin);
    expect(sort.statusCode).toBe(400);
    expect(sort.json().message).toContain('sort_field');
  });
});

describe('audit reports', () => {
  it('a user reports one of their own events once; the report shows on the event', async () => {
    const user = await createUser(t.app);
    const event = await eventOf(user.id);
    const filed = await send(
      'POST',
      `/v1/users/me/audit/${event.id}/report`,
      { reason: 'suspicious', description: 'not from here' },
      bearer(user.token),
    );
    expect(filed.statusCode).toBe(201);
    expect(filed.json()).toEqual({
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
    const again = await send('POST', `/v1/users/me/audit/${event.id}/report`, { reason: 'other' }, bearer(user.token));
    expect(again.statusCode).toBe(409);
    expect(again.json().code).toBe('audit_report.already_reported');
    const mine = (await get('/v1/users/me/audit/reports', user.token)).json();
    expect(mine.map((r: { audit_event_id: string }) => r.audit_event_id)).toEqual([event.id]);
    const listed = (await get(`/v1/users/me/audit?event_type=user_updated`, user.token)).json();
    expect(listed.events[0].is_reported).toBe(true);
  });

  it("answers 404 for another user's event and 400 for an unknown reason", async () => {
    const user = await createUser(t.app);
    const other = await createUser(t.app);
    const event = await eventOf(other.id);
    const response = await send(
      'POST',
      `/v1/users/me/audit/${event.id}/report`,
      { reason: 'not_me' },
      bearer(user.token),
    );
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({
      error: 'NotFound',
      message: 'Audit event not found',
      code: 'audit.event_not_found',
    });
    const reason = await send(
      'POST',
      `/v1/users/me/audit/${event.id}/report`,
      { reason: 'bored' },
      bearer(other.token),
    );
    expect(reason.statusCode).toBe(400);
    expect(reason.json().message).toContain('reason');
  });

  it("an admin's review sets status, notes, reviewer and time, and mails the reporting user in their locale", async () => {
    const user = await createUser(t.app);
    await t.app.inject({
      method: 'PATCH',
      url: `/v1/users/${user.id}/locale`,
      payload: { locale: 'de' },
      headers: bearer(user.token),
    });
    const event = await eventOf(user.id);
    const report = (
      await send('POST', `/v1/users/me/audit/${event.id}/report`, { reason: 'unknown_device' }, bearer(user.token))
    ).json().report;

    const pending = (await get('/v1/admin/audit/reports?status=pending', admin)).json();
    expect(pending.map((r: { id: string }) => r.id)).toContain(report.id);
    expect((await get('/v1/admin/audit/reports', user.token)).statusCode).toBe(403);

    const adminId = (await get('/v1/users/me', admin)).json().data.id;
    const reviewed = await send(
      'PATCH',
      `/v1/admin/audit/reports/${report.id}`,
      { status: 'resolved', resolution_notes: 'Key rotated' },
      bearer(admin),
    );
    expect(reviewed.statusCode).toBe(200);
    expect(reviewed.json()).toEqual({
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
      (await get('/v1/admin/audit/reports?status=pending', admin)).json().map((r: { id: string }) => r.id),
    ).not.toContain(report.id);

    const missing = await send(
      'PATCH',
      `/v1/admin/audit/reports/${randomUUID()}`,
      { status: 'dismissed' },
      bearer(admin),
    );
    expect(missing.statusCode).toBe(404);
    expect((await send('PATCH', `/v1/admin/audit/reports/${report.id}`, {}, bearer(admin))).statusCode).toBe(400);
  });
});

describe('POST /v1/internal/audit', () => {
  const post = (payload: object, headers: Record<string, string> = {}) =>
    send('POST', '/v1/internal/audit', payload, headers);

  it('takes events from the system key: bots may name external users, the API must name real ones', async () => {
    const bot = await post(
      {
        event_type: 'bot_command_executed',
        user_id: '123456789012345678',
        source_service: 'community_bot',
        metadata: { command: '/ping' },
      },
      bearer(TEST_SYSTEM_KEY),
    );
    expect(bot.statusCode).toBe(201);
    expect(bot.json()).toMatchObject({
      user_id: '123456789012345678',
      source_service: 'community_bot',
      metadata: { command: '/ping' },
      actor_id: null,
    });
    const unknown = await post({ event_type: 'user_updated', user_id: randomUUID() }, bearer(TEST_SYSTEM_KEY));
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json()).toEqual({
      error: 'BadRequest',
      message: 'user_id does not name an existing user',
      code: 'audit.unknown_user',
    });
    const external = await post({ event_type: 'user_updated', user_id: 'discord:42' }, bearer(TEST_SYSTEM_KEY));
    expect(external.statusCode).toBe(400);
    const actor = await post(
      { event_type: 'user_updated', actor_id: randomUUID(), source_service: 'stream_bot' },
      bearer(TEST_SYSTEM_KEY),
    );
    expect(actor.statusCode).toBe(400);
    expect(actor.json().code).toBe('audit.unknown_actor');
    const type = await post({ event_type: 'made_up' }, bearer(TEST_SYSTEM_KEY));
    expect(type.statusCode).toBe(400);
    expect(type.json().message).toContain('event_type');
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
    expect((await post({ event_type: 'user_updated', user_id: user.id }, bearer(key))).statusCode).toBe(201);
    expect(
      (await post({ event_type: 'user_updated', user_id: user.id, actor_id: user.id }, bearer(writer.token)))
        .statusCode,
    ).toBe(201);
    const refused = await post({ event_type: 'user_updated', user_id: user.id }, bearer(user.token));
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toEqual(forbidden('audit:write'));
    // Without credentials, even an empty or invalid body answers 401, not a validation error.
    for (const body of [{ event_type: 'user_updated' }, {}, { event_type: 42 }]) {
      const anonymous = await post(body);
      expect(anonymous.statusCode).toBe(401);
      expect(anonymous.json().code).toBe('audit.credentials_required');
    }
  });

  it("an internal app attributes an event to an end user with X-ID-App-Assertion, and keeps the user's address", async () => {
    const user = await createUser(t.app);
    const response = await post(
      { event_type: 'consent_granted', ip_address: '203.0.113.9', user_agent: 'Firefox' },
      { 'x-id-app-key': APP_SECRETS.id, 'x-id-app-assertion': assertion(user.id) },
    );
    expect(response.statusCode).toBe(201);
    expect(response.json()).toMatchObject({
      user_id: user.id,
      actor_id: user.id,
      source_service: 'id',
      ip_address: '203.0.113.9',
      user_agent: 'Firefox',
    });

    const noAssertion = await post(
      { event_type: 'consent_granted', actor_id: user.id },
      { 'x-id-app-key': APP_SECRETS.id },
    );
    expect(noAssertion.statusCode).toBe(403);
    expect(noAssertion.json().code).toBe('audit.actor_needs_assertion');
    const otherApp = await post(
      { event_type: 'consent_granted' },
      { 'x-id-app-key': APP_SECRETS.backend, 'x-id-app-assertion': assertion(user.id) },
    );
    expect(otherApp.statusCode).toBe(403);
    expect(otherApp.json().code).toBe('audit.app_mismatch');
    const mismatch = await post(
      { event_type: 'consent_granted', actor_id: randomUUID() },
      { 'x-id-app-key': APP_SECRETS.id, 'x-id-app-assertion': assertion(user.id) },
    );
    expect(mismatch.json().code).toBe('audit.actor_mismatch');
    const badKey = await post({ event_type: 'consent_granted' }, { 'x-id-app-key': 'not-a-secret' });
    expect(badKey.statusCode).toBe(401);
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
    const response = await post(
      { event_type: 'consent_granted' },
      { 'x-id-app-key': APP_SECRETS.id, 'x-id-app-assertion': mint(user.id) },
    );
    expect(response.statusCode).toBe(401);
    expect(response.json().code).toBe(code);
  });

  it('accepts an assertion once, on any node', async () => {
    const user = await createUser(t.app);
    const header = assertion(user.id);
    const headers = { 'x-id-app-key': APP_SECRETS.id, 'x-id-app-assertion': header };
    expect((await post({ event_type: 'consent_granted' }, headers)).statusCode).toBe(201);
    const replay = await post({ event_type: 'consent_granted' }, headers);
    expect(replay.statusCode).toBe(401);
    expect(replay.json().code).toBe('app_assertion.replayed');

    // A second node on the same database and key-value store refuses it too, and a fresh one from it once.
    const node = await buildApp(t.config, { database: t.database, kv: t.kv, clock: t.clock }, { logger: false });
    try {
      const elsewhere = await node.inject({
        method: 'POST',
        url: '/v1/internal/audit',
        payload: { event_type: 'consent_granted' },
        headers,
      });
      expect(elsewhere.json().code).toBe('app_assertion.replayed');
      const fresh = { ...headers, 'x-id-app-assertion': assertion(user.id) };
      expect(
        (
          await node.inject({
            method: 'POST',
            url: '/v1/internal/audit',
            payload: { event_type: 'consent_granted' },
            headers: fresh,
          })
        ).statusCode,
      ).toBe(201);
      expect((await post({ event_type: 'consent_granted' }, fresh)).statusCode).toBe(401);
    } finally {
      await node.close();
    }
  });
});
