import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, unchecked, type Client, type RequestBody } from '../../../test/client.js';
import {
  buildTestApp,
  createApiKey,
  createUser,
  login,
  onEveryNode,
  TEST_ADMIN,
  TEST_SYSTEM_KEY,
  UNAUTHORIZED,
  type TestApp,
} from '../../../test/helpers.js';
import { buildApp } from '../../app.js';
import { hashToken } from '../../platform/auth/tokens.js';
import { ActivityRecorder } from './activity.js';
import { socketAs } from '../../../test/ws-client.js';

const IPHONE =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1';
const IPAD =
  'Mozilla/5.0 (iPad; CPU OS 16_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/16.6 Mobile/15E148 Safari/604.1';
const CHROME_LINUX =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36';
const SYSTEM_KEY_ONLY = {
  error: 'Forbidden',
  message: 'Only the system API key may call this endpoint',
  code: 'auth.system_key_required',
};
const SESSION_ONLY = {
  error: 'Forbidden',
  message: 'This endpoint requires a session token',
  code: 'session.session_required',
};

let t: TestApp;
let adminToken: string;
let adminKey: string;
beforeAll(async () => {
  t = await buildTestApp();
  adminToken = await login(t.app, 'admin', TEST_ADMIN.password);
  // (It may sign its owner out of apps; the session-only routes refuse it all the same.)
  adminKey = (await createApiKey(t.app, adminToken, { name: 'sessions test key', scopes: ['connected_apps:sign_out'] }))
    .key;
});
afterAll(() => t.close());

const auditEvents = (eventType: string, userId: string) =>
  t.database.db
    .selectFrom('audit_events')
    .selectAll()
    .where('event_type', '=', eventType)
    .where('user_id', '=', userId)
    .orderBy('created_at')
    .execute();

const signIn = async (username: string, password: string, userAgent: string) => {
  const { body } = await t
    .as(null)
    .post('/v1/auth/login', { identifier: username, password }, { headers: { 'user-agent': userAgent } })
    .expect(200);
  return { token: body.session_token as string, id: body.session_id as string };
};

const mySessions = (token: string) => t.as(token).get('/v1/users/me/sessions');
const stillSignedIn = async (token: string) => (await mySessions(token)).status === 200;
const sessionRow = (id: string) =>
  t.database.db.selectFrom('sessions').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

describe('GET /v1/users/me/sessions', () => {
  it('lists the live sessions with parsed agents, provider names and the current one marked', async () => {
    const user = await createUser(t.app);
    const phone = await signIn(user.username, user.password, IPHONE);
    const desktop = await signIn(user.username, user.password, CHROME_LINUX);
    const expired = await signIn(user.username, user.password, IPAD);
    await t.database.db
      .updateTable('sessions')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('id', '=', expired.id)
      .execute();

    const { body } = await mySessions(desktop.token).expect(200);
    expect(body.current_session_id).toBe(desktop.id);
    expect(body._links).toEqual({ self: 'http://localhost/v1/users/me/sessions' });
    expect(body.sessions).toHaveLength(3);
    expect(body.sessions.map((s) => s.id)).not.toContain(expired.id);
    // The session making the request was used last.
    expect(body.sessions[0]).toEqual({
      id: desktop.id,
      ip_address: '127.0.0.1',
      user_agent: CHROME_LINUX,
      device_type: 'desktop',
      browser_name: 'Chrome 120.0.0.0',
      os_name: 'Linux',
      provider: 'email',
      provider_name: 'Email',
      last_activity_at: expect.any(String),
      created_at: expect.any(String),
      expires_at: expect.any(String),
      is_current: true,
    });
    const phoneEntry = body.sessions.find((s) => s.id === phone.id);
    expect(phoneEntry).toMatchObject({
      device_type: 'mobile',
      browser_name: 'Mobile Safari 17.0',
      os_name: 'iOS 17.0',
      is_current: false,
    });
    const dates = body.sessions.map((s) => Date.parse(s.last_activity_at));
    expect(dates).toEqual([...dates].sort((a, b) => b - a));
  });

  it('recognises tablets', async () => {
    const user = await createUser(t.app);
    const tablet = await signIn(user.username, user.password, IPAD);
    const [entry] = (await mySessions(tablet.token).expect(200)).body.sessions.filter((s) => s.id === tablet.id);
    expect(entry!.device_type).toBe('tablet');
  });

  it('needs a session token: 401 without credentials, 403 for API keys and the system key', async () => {
    expect((await t.as(null).get('/v1/users/me/sessions')).body).toEqual(UNAUTHORIZED);
    const withKey = await mySessions(adminKey).expect(403);
    expect(withKey.body).toEqual(SESSION_ONLY);
    const withSystemKey = await mySessions(TEST_SYSTEM_KEY).expect(403);
    expect(withSystemKey.body).toEqual({
      error: 'Forbidden',
      message: 'System key not permitted on this route',
      code: 'auth.system_key_not_permitted',
    });
  });
});

describe('DELETE /v1/users/me/sessions/{session_id}', () => {
  const revoke = (token: string, id: string) => t.as(token).delete(`/v1/users/me/sessions/${id}`);

  it('signs another session out at once and records session_revoked', async () => {
    const user = await createUser(t.app);
    const other = await signIn(user.username, user.password, IPHONE);
    expect(await stillSignedIn(other.token)).toBe(true);
    const response = await revoke(user.token, other.id).expect(200);
    expect(response.body).toEqual({ success: true, message: 'Session revoked' });
    expect((await mySessions(other.token)).status).toBe(401);
    expect(await stillSignedIn(user.token)).toBe(true);
    expect((await auditEvents('session_revoked', user.id)).at(-1)).toMatchObject({
      resource_type: 'session',
      resource_id: other.id,
    });
  });

  it('refuses the current session with 400 { success: false, message }', async () => {
    const user = await createUser(t.app);
    const current = (await mySessions(user.token).expect(200)).body.current_session_id;
    const response = await revoke(user.token, current).expect(400);
    expect(response.body).toEqual({
      error: 'BadRequest',
      success: false,
      message: 'Cannot revoke the current session; use POST /v1/auth/logout instead',
      code: 'session.current_session',
    });
    expect((await revoke(user.token, current.toUpperCase())).status).toBe(400);
    expect(await stillSignedIn(user.token)).toBe(true);
  });

  it("answers 404 for someone else's session and unknown ids, 400 for a malformed id", async () => {
    const owner = await createUser(t.app);
    const stranger = await createUser(t.app);
    const ownerSession = (await mySessions(owner.token).expect(200)).body.current_session_id;
    for (const id of [ownerSession, randomUUID()]) {
      const response = await revoke(stranger.token, id).expect(404);
      expect(response.body).toEqual({ error: 'NotFound', message: 'Session not found', code: 'session.not_found' });
    }
    expect(await stillSignedIn(owner.token)).toBe(true);
    const malformed = await revoke(stranger.token, 'not-a-uuid').expect(400);
    expect(malformed.body.message).toMatch(/path parameter 'session_id'/i);
  });

  it('refuses API keys before looking at the id', async () => {
    const response = await revoke(adminKey, 'not-a-uuid').expect(403);
    expect(response.body).toEqual(SESSION_ONLY);
  });
});

describe('DELETE /v1/users/me/sessions', () => {
  const revokeOthers = (token: string) => t.as(token).delete('/v1/users/me/sessions');

  it('signs every other session out and keeps the current one', async () => {
    const user = await createUser(t.app);
    const others = [
      await signIn(user.username, user.password, IPHONE),
      await signIn(user.username, user.password, IPAD),
    ];
    const bystander = await createUser(t.app);
    const response = await revokeOthers(user.token).expect(200);
    expect(response.body).toEqual({ success: true, revoked_count: 2, message: 'Revoked 2 other sessions' });
    for (const other of others) expect((await mySessions(other.token)).status).toBe(401);
    expect((await mySessions(user.token).expect(200)).body.sessions).toHaveLength(1);
    expect(await stillSignedIn(bystander.token)).toBe(true);
    const [event] = await auditEvents('session_revoked', user.id);
    expect(event!.metadata).toMatchObject({ session_ids: expect.arrayContaining(others.map((o) => o.id)) });

    expect((await revokeOthers(user.token)).body).toEqual({
      success: true,
      revoked_count: 0,
      message: 'Revoked 0 other sessions',
    });
  });

  it('needs a session token', async () => {
    expect((await t.as(null).delete('/v1/users/me/sessions')).status).toBe(401);
    expect((await revokeOthers(adminKey)).body).toEqual(SESSION_ONLY);
  });
});

describe('session activity', () => {
  it('notes activity in memory (no write per request) and writes it in one batch on flush', async () => {
    const user = await createUser(t.app);
    const current = (await mySessions(user.token).expect(200)).body.current_session_id;
    // On two nodes the request may have landed on either: each notes activity in its own memory.
    await onEveryNode(t, (services) => services.sessions.activity.flush());
    const anHourAgo = new Date(Date.now() - 3600_000);
    await t.database.db
      .updateTable('sessions')
      .set({ last_activity_at: anHourAgo })
      .where('id', '=', current)
      .execute();

    const before = Date.now();
    const listed = (await mySessions(user.token).expect(200)).body.sessions.find((s) => s.id === current);
    expect((await sessionRow(current)).last_activity_at).toEqual(anHourAgo);
    // The list shows the value noted in memory.
    expect(Date.parse(listed!.last_activity_at)).toBeGreaterThanOrEqual(before - 1000);

    await onEveryNode(t, (services) => services.sessions.activity.flush());
    expect((await sessionRow(current)).last_activity_at.getTime()).toBeGreaterThanOrEqual(before - 1000);
  });

  it('never moves last_activity_at backwards', async () => {
    const user = await createUser(t.app);
    const current = (await mySessions(user.token).expect(200)).body.current_session_id;
    await t.app.services.sessions.activity.flush();
    const stored = (await sessionRow(current)).last_activity_at;
    t.app.services.sessions.activity.note(current, new Date(stored.getTime() - 60_000));
    await t.app.services.sessions.activity.flush();
    expect((await sessionRow(current)).last_activity_at).toEqual(stored);
  });

  it('writes noted activity when the app closes', async () => {
    const user = await createUser(t.app);
    const current = (await mySessions(user.token).expect(200)).body.current_session_id;
    // On two nodes the request may have landed on either: each notes activity in its own memory.
    await onEveryNode(t, (services) => services.sessions.activity.flush());
    const anHourAgo = new Date(Date.now() - 3600_000);
    await t.database.db
      .updateTable('sessions')
      .set({ last_activity_at: anHourAgo })
      .where('id', '=', current)
      .execute();
    const second = await buildApp(t.config, { database: t.database, kv: t.kv }, { logger: false });
    await client(second, user.token).get('/v1/users/me/sessions').expect(200);
    expect((await sessionRow(current)).last_activity_at).toEqual(anHourAgo);
    await second.close();
    expect((await sessionRow(current)).last_activity_at.getTime()).toBeGreaterThan(anHourAgo.getTime());
  });

  it('keeps a batch that could not be written for the next flush', async () => {
    const writes: [string, Date][][] = [];
    let fail = true;
    const recorder = new ActivityRecorder(async (entries) => {
      if (fail) throw new Error('database unavailable');
      writes.push(entries);
    }, t.app.log);
    const early = new Date(1000);
    const late = new Date(2000);
    recorder.note('a', late);
    recorder.note('a', early);
    recorder.note('b', early);
    await recorder.flush();
    expect(recorder.pendingFor('a')).toEqual(late);
    fail = false;
    await recorder.stop();
    expect(writes).toEqual([
      [
        ['a', late],
        ['b', early],
      ],
    ]);
    expect(recorder.pendingFor('a')).toBeUndefined();
  });

  it('puts the session used most recently first', async () => {
    const user = await createUser(t.app);
    const first = await signIn(user.username, user.password, IPHONE);
    const second = await signIn(user.username, user.password, CHROME_LINUX);
    await onEveryNode(t, (services) => services.sessions.activity.flush());
    await t.database.db
      .updateTable('sessions')
      .set({ last_activity_at: new Date(Date.now() - 3600_000) })
      .where('user_id', '=', user.id)
      .execute();
    await stillSignedIn(second.token);
    expect((await mySessions(first.token).expect(200)).body.sessions.map((s) => s.id).slice(0, 2)).toEqual([
      first.id,
      second.id,
    ]);
  });
});

describe('internal session endpoints', () => {
  // The system key, calling as the id app.
  const fromId = { headers: { 'x-source-service': 'id' } };
  const inAWeek = () => new Date(Date.now() + 7 * 86_400_000).toISOString();
  const create = (body: RequestBody<'post', '/v1/sessions'>) =>
    t.as(TEST_SYSTEM_KEY).post('/v1/sessions', body, fromId);
  const lookUp = (token: string) => t.as(TEST_SYSTEM_KEY).get(`/v1/sessions/${token}`, fromId);

  it('creates a ses_ session the person can use, stored hashed, and records session_created', async () => {
    const user = await createUser(t.app);
    const expires = inAWeek();
    const { body } = await create({ userId: user.id, expires }).expect(201);
    expect(body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      sessionToken: expect.stringMatching(/^ses_[A-Za-z0-9_-]{43}$/),
      userId: user.id,
      expires,
      created_at: expect.any(String),
    });
    expect((await sessionRow(body.id)).token_hash).toBe(hashToken(body.sessionToken));
    const listed = (await mySessions(body.sessionToken).expect(200)).body;
    expect(listed.current_session_id).toBe(body.id);
    expect(listed.sessions.find((s) => s.id === body.id)).toMatchObject({
      provider: 'email',
      provider_name: 'Email',
    });
    const event = (await auditEvents('session_created', user.id)).at(-1);
    expect(event).toMatchObject({ resource_id: body.id, source_service: 'id', metadata: { app: 'id' } });
  });

  it('validates the body: past expiry, bad or unknown user', async () => {
    const user = await createUser(t.app);
    const past = await create({ userId: user.id, expires: new Date(Date.now() - 1000).toISOString() }).expect(400);
    expect(past.body).toEqual({
      error: 'BadRequest',
      message: 'expires must be in the future',
      code: 'session.expires_in_past',
    });
    const badId = await create({ userId: 'nope', expires: inAWeek() }).expect(400);
    expect(badId.body.message).toMatch(/'userId'/);
    const badDate = await create({ userId: user.id, expires: 'tomorrow' }).expect(400);
    expect(badDate.body.message).toMatch(/'expires'/);
    const missing = await create(unchecked({ userId: user.id }));
    expect(missing.body).toEqual({
      error: 'BadRequest',
      message: "Body field 'expires' is required",
      code: 'request.validation',
    });
    const unknown = await create({ userId: randomUUID(), expires: inAWeek() }).expect(404);
    expect(unknown.body).toEqual({ error: 'NotFound', message: 'User not found', code: 'user.not_found' });
  });

  it('is for the system key only: 401 without credentials, 403 for sessions and API keys (before validation)', async () => {
    const user = await createUser(t.app);
    const routes: ((api: Client) => Promise<{ status: number; body: unknown }>)[] = [
      (api) => api.post('/v1/sessions', unchecked({ junk: true })),
      (api) => api.get('/v1/sessions/ses_whatever'),
      (api) => api.delete('/v1/sessions/ses_whatever?reason=bogus'),
    ];
    for (const send of routes) {
      expect((await send(t.as(null))).body).toEqual(UNAUTHORIZED);
      for (const credential of [user.token, adminToken, adminKey]) {
        const response = await send(t.as(credential));
        expect(response.status).toBe(403);
        expect(response.body).toEqual(SYSTEM_KEY_ONLY);
      }
    }
  });

  it('looks a live session up by its token', async () => {
    const user = await createUser(t.app);
    const created = (await create({ userId: user.id, expires: inAWeek() }).expect(201)).body;
    const response = await lookUp(created.sessionToken).expect(200);
    expect(response.body).toEqual(created);
    // A login session is found the same way.
    const viaLogin = await lookUp(user.token);
    expect(viaLogin.body).toMatchObject({ sessionToken: user.token, userId: user.id });
  });

  it('answers 404 for unknown and expired tokens', async () => {
    const user = await createUser(t.app);
    const created = (await create({ userId: user.id, expires: inAWeek() }).expect(201)).body;
    await t.database.db
      .updateTable('sessions')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('id', '=', created.id)
      .execute();
    for (const token of [created.sessionToken, 'ses_unknown']) {
      const response = await lookUp(token).expect(404);
      expect(response.body).toEqual({ error: 'NotFound', message: 'Session not found', code: 'session.not_found' });
    }
  });

  it('ends a session: 204, refused on the next request, logout event with reason, session and app', async () => {
    const user = await createUser(t.app);
    const created = (await create({ userId: user.id, expires: inAWeek() }).expect(201)).body;
    expect(await stillSignedIn(created.sessionToken)).toBe(true);
    const response = await t
      .as(TEST_SYSTEM_KEY)
      .delete(`/v1/sessions/${created.sessionToken}`, { query: { reason: 'no_access' }, ...fromId })
      .expect(204);
    expect(response.text).toBe('');
    expect((await mySessions(created.sessionToken)).status).toBe(401);
    expect((await lookUp(created.sessionToken)).status).toBe(404);
    const event = (await auditEvents('logout', user.id)).at(-1);
    expect(event).toMatchObject({ resource_id: created.id, source_service: 'id' });
    expect(event!.metadata).toEqual({ reason: 'no_access', session_id: created.id, app: 'id' });
  });

  it('defaults the reason to user_initiated and records no app without X-Source-Service', async () => {
    const user = await createUser(t.app);
    await t.as(TEST_SYSTEM_KEY).delete(`/v1/sessions/${user.token}`).expect(204);
    const event = (await auditEvents('logout', user.id)).at(-1);
    expect(event!.metadata).toEqual({ reason: 'user_initiated', session_id: expect.any(String), app: null });
    expect(event!.source_service).toBe('api');
  });

  it('accepts every listed reason and refuses others with 400', async () => {
    for (const reason of ['user_initiated', 'token_deleted', 'session_expired', 'revoked', 'no_access'] as const) {
      await t
        .as(TEST_SYSTEM_KEY)
        .delete('/v1/sessions/ses_gone', { query: { reason }, ...fromId })
        .expect(204);
    }
    const user = await createUser(t.app);
    const response = await t
      .as(TEST_SYSTEM_KEY)
      .delete(`/v1/sessions/${user.token}?reason=because`, fromId)
      .expect(400);
    expect(response.body).toEqual({
      error: 'BadRequest',
      message:
        "Query parameter 'reason' must be one of: user_initiated, token_deleted, session_expired, revoked, no_access",
      code: 'request.validation',
    });
    expect(await stillSignedIn(user.token)).toBe(true);
  });

  it('answers an unknown or already ended token with 204 and writes no event', async () => {
    const user = await createUser(t.app);
    const end = () => t.as(TEST_SYSTEM_KEY).delete(`/v1/sessions/${user.token}`, fromId);
    expect((await end()).status).toBe(204);
    expect((await end()).status).toBe(204);
    expect(await auditEvents('logout', user.id)).toHaveLength(1);
  });
});

describe('logout-everywhere and logout-app', () => {
  let base: string;
  beforeAll(async () => {
    base = await t.app.listen({ host: '127.0.0.1', port: 0 });
  });

  it('sends forceLogout with the default reason sso_logout to open apps, closes them and records it; sessions stay', async () => {
    const user = await createUser(t.app);
    const socket = await socketAs(base, user.token);
    const response = await t.as(user.token).post('/v1/auth/logout-everywhere').expect(200);
    expect(response.body).toEqual({ message: 'Signed out of all apps' });
    expect(await socket.next('forceLogout')).toEqual({ type: 'forceLogout', reason: 'sso_logout' });
    expect(await socket.closed).toEqual({ code: 4001, reason: 'forceLogout' });
    expect((await auditEvents('logout', user.id)).at(-1)!.metadata).toEqual({ reason: 'sso_logout' });
    expect(await stillSignedIn(user.token)).toBe(true);
  });

  it('carries the given reason, also for an API key of the user', async () => {
    const socket = await socketAs(base, adminKey);
    await t.as(adminKey).post('/v1/auth/logout-everywhere', { reason: 'password_changed' }).expect(200);
    const adminId = (await t.as(TEST_SYSTEM_KEY).get(`/v1/sessions/${adminToken}`).expect(200)).body.userId;
    expect(await socket.next('forceLogout')).toEqual({ type: 'forceLogout', reason: 'password_changed' });
    expect((await auditEvents('logout', adminId)).at(-1)!.metadata).toEqual({ reason: 'password_changed' });
  });

  it('refuses anonymous callers, the system key and malformed reasons', async () => {
    expect((await t.as(null).post('/v1/auth/logout-everywhere')).body).toEqual(UNAUTHORIZED);
    expect((await t.as(TEST_SYSTEM_KEY).post('/v1/auth/logout-everywhere')).status).toBe(403);
    const user = await createUser(t.app);
    const response = await t
      .as(user.token)
      .post('/v1/auth/logout-everywhere', unchecked({ reason: 42 }))
      .expect(400);
    expect(response.body.message).toMatch(/'reason'/);
  });

  it('signs out of one app: appLogout to open apps and a logout event with the client id', async () => {
    const user = await createUser(t.app);
    const socket = await socketAs(base, user.token);
    const clientId = randomUUID();
    const response = await t.as(user.token).post('/v1/auth/logout-app', { clientId }).expect(200);
    expect(response.body).toEqual({ message: 'Signed out of the app' });
    expect(await socket.next('appLogout')).toEqual({ type: 'appLogout', clientId });
    // The user's session connection stays: only that app's tokens (and their connections) end.
    expect(await socket.request({ type: 'Ping' }, 'Pong')).toEqual({ type: 'Pong' });
    expect((await auditEvents('logout', user.id)).at(-1)!.metadata).toEqual({ client_id: clientId });
    expect(await stillSignedIn(user.token)).toBe(true);
  });

  it('requires a UUID clientId and a credential', async () => {
    const user = await createUser(t.app);
    const missing = await t.as(user.token).post('/v1/auth/logout-app', unchecked({}));
    expect(missing.body).toEqual({
      error: 'BadRequest',
      message: "Body field 'clientId' is required",
      code: 'request.validation',
    });
    const malformed = await t.as(user.token).post('/v1/auth/logout-app', { clientId: 'web' }).expect(400);
    expect(malformed.body.message).toMatch(/'clientId'/);
    const anonymous = await t.as(null).post('/v1/auth/logout-app', { clientId: randomUUID() });
    expect(anonymous.body).toEqual(UNAUTHORIZED);
  });
});
