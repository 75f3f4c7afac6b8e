import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { pdfText, unzip } from '../../../test/archives.js';
import type { Options } from '../../../test/client.js';
import {
  buildTestApp,
  createApiKey,
  createUser,
  forbidden,
  login,
  onEveryNode,
  ownerlessKey,
  TEST_ADMIN,
  type TestApp,
} from '../../../test/helpers.js';

let t: TestApp;
let admin: string;
beforeAll(async () => {
  t = await buildTestApp();
  admin = await login(t.app, 'admin', TEST_ADMIN.password);
});
afterAll(() => t.close());
// Every test starts at the same moment, whatever ran before it and moved the clock.
beforeEach(() => t.clock.freeze(new Date('2026-11-25T09:30:00Z')));

/** The user agent the export's log records. */
const AGENT = { headers: { 'user-agent': 'export-test/1.0' } };

/** A user with an API key, a device reporting with it, and `points` GPS points the user sent from it. */
async function trackedUser(points: number) {
  const user = await createUser(t.app, ['role_user', 'role_developer']);
  const key = await createApiKey(t.app, user.token, { name: 'boat tracker', scopes: [] });
  const device = await t.as(admin).post('/v1/devices', { name: 'Boat', api_key_id: key.id }).expect(201);
  const deviceId = device.body.data.id as string;
  const start = Date.parse('2026-11-01T00:00:00Z');
  const rows = Array.from({ length: points }, (_, i) => ({
    device_id: deviceId,
    sent_by: user.id,
    latitude: 52 + i / 10_000,
    longitude: 13,
    timestamp: new Date(start + i * 1000),
    speed_kmh: 0,
    speed_mps: 0,
    speed_mph: 0,
    speed_knots: 0,
  }));
  for (let i = 0; i < rows.length; i += 1000)
    await t.database.db
      .insertInto('gps_points')
      .values(rows.slice(i, i + 1000))
      .execute();
  return { ...user, key, deviceId };
}

describe('GET /v1/user/export', () => {
  it('streams a ZIP with data.json, tracks.gpx, report.pdf and README.txt, and logs it with its real size', async () => {
    const user = await trackedUser(2500);
    const app = await t
      .as(user.token)
      .post('/v1/oauth/clients', { name: 'Boat app', redirect_uris: ['https://boat.example.org/cb'] })
      .expect(201);
    const optOut = await t
      .as(user.token)
      .patch('/v1/users/me/security-notifications', { new_api_key: false })
      .expect(200);
    await t.as(user.token).patch('/v1/users/me/preferences', { speed_unit: 'knots' }).expect(200);
    await onEveryNode(t, (services) => services.securityNotices.settled()); // the sign-in's browser and network are recorded after its answer
    const response = await t.as(user.token).get('/v1/user/export', AGENT).expect(200);
    expect(response.headers['content-type']).toBe('application/zip');
    expect(response.headers['content-disposition']).toBe('attachment; filename="service-data-export-2026-11-25.zip"');

    const files = await unzip(response.bytes);
    expect([...files.keys()]).toEqual(['data.json', 'tracks.gpx', 'report.pdf', 'README.txt']);
    const gpx = files.get('tracks.gpx')!.toString('utf8');
    expect(gpx).toContain(`<name>${user.username}: GPS points sent</name>`);
    expect(gpx.match(/<trkpt /g)).toHaveLength(2500);
    expect(gpx).toContain('<time>2026-11-01T00:00:00.000Z</time>');
    const data = JSON.parse(files.get('data.json')!.toString('utf8'));
    expect(Object.keys(data)).toEqual([
      'exportInfo',
      'user',
      'platformAccounts',
      'connectedApps',
      'ownedApps',
      'apiKeys',
      'roles',
      'twoFactorAuth',
      'passkeys',
      'securityNotifications',
      'preferences',
      'deletionStatus',
      'exportLogs',
      'sessions',
      'integrations',
      'devices',
      'ownedDevices',
      'gpsPoints',
      'ownedDevicePoints',
    ]);
    expect(data.exportInfo).toEqual({ exportedAt: '2026-11-25T09:30:00.000Z', format: 'json', version: '1.0' });
    expect(data.user).toEqual({
      id: user.id,
      username: user.username,
      privacyMode: false,
      avatarsEnabled: true,
      createdAt: expect.any(String),
      lastLoginAt: expect.any(String),
    });
    expect(data.platformAccounts).toEqual([
      expect.objectContaining({ email: `${user.username}@example.org`, platformSlug: 'email', isPrimary: true }),
    ]);
    expect(data.apiKeys).toEqual([
      expect.objectContaining({ id: user.key.id, name: 'boat tracker', keyPrefix: expect.any(String), scopes: [] }),
    ]);
    expect(data.roles.sort()).toEqual(['Developer', 'User']);
    expect(data.ownedApps).toEqual([
      expect.objectContaining({
        id: app.body.client.id,
        name: 'Boat app',
        redirectUris: ['https://boat.example.org/cb'],
        clientType: 'confidential',
      }),
    ]);
    expect(data.connectedApps).toEqual([]);
    expect(data.integrations).toEqual([]); // (with one: integrations.test.ts)
    expect(data.twoFactorAuth).toEqual({ enabled: false, enabledAt: null, backupCodesRemaining: 0 });
    expect(data.passkeys).toEqual([]); // (their listed fields: passkeys.test.ts)
    expect(data.securityNotifications).toEqual({
      newSignIn: true,
      newApiKey: false,
      knownSignIns: [{ firstSeenAt: expect.any(String), lastSeenAt: expect.any(String) }],
    });
    expect(data.preferences).toEqual({
      speedUnit: 'knots',
      distanceUnit: 'km',
      timeZone: null,
      coordinateFormat: 'decimal',
    });
    expect(data.deletionStatus).toBeNull();
    expect(data.sessions).toEqual([
      expect.objectContaining({ isCurrent: true, ipAddress: expect.any(String), deviceType: expect.any(String) }),
    ]);
    expect(data.devices).toEqual([expect.objectContaining({ id: user.deviceId, name: 'Boat' })]);
    expect(data.gpsPoints).toHaveLength(2500);
    expect(data.gpsPoints[0]).toMatchObject({
      deviceId: user.deviceId,
      latitude: 52,
      timestamp: '2026-11-01T00:00:00.000Z',
      speedKmh: 0,
    });
    expect(data.gpsPoints[2499].timestamp).toBe('2026-11-01T00:41:39.000Z');
    // The boat is the user's (the owner of the key it was made with); every point of it they sent themselves.
    expect(data.ownedDevices).toEqual([expect.objectContaining({ id: user.deviceId, name: 'Boat', ownerId: user.id })]);
    expect(data.ownedDevicePoints).toEqual([]);

    // Nothing secret: not the key, not a hash, no password.
    const text = files.get('data.json')!.toString('utf8');
    expect(text).not.toContain(user.key.key);
    expect(text).not.toContain(app.body.client_secret);
    expect(text).not.toMatch(/hash|password|secret/i);

    const report = await pdfText(files.get('report.pdf')!);
    expect(report).toContain('Your personal data');
    expect(report).toContain(`Export for ${user.username}, made 2026-11-25 09:30 (UTC).`);
    expect(report).toContain('GPS points you sent: 2500');
    expect(report).toContain('Devices you own: 1');
    expect(report).toContain('GPS points of your devices sent by others: 0');
    expect(files.get('README.txt')!.toString('utf8')).toContain('data.json');

    const logs = (await t.as(user.token).get('/v1/user/export/logs', AGENT).expect(200)).body;
    expect(logs).toEqual({
      logs: [
        {
          id: expect.any(String),
          exportedAt: '2026-11-25T09:30:00.000Z',
          ipAddress: '127.0.0.1',
          userAgent: 'export-test/1.0',
          exportFormat: 'zip',
          fileSizeBytes: response.bytes.length,
          locale: 'en',
          createdAt: expect.any(String),
        },
      ],
      total: 1,
      hasMore: false,
    });
    const events = await t.database.db
      .selectFrom('audit_events')
      .selectAll()
      .where('user_id', '=', user.id)
      .where('event_type', '=', 'data_exported')
      .execute();
    expect(events).toEqual([
      expect.objectContaining({
        resource_type: 'export',
        resource_id: logs.logs[0]!.id,
        metadata: { format: 'zip', file_size_bytes: response.bytes.length, gps_points: 2500 },
      }),
    ]);
  });

  it('holds the points the user sent, not those others sent from a device now linked to their key', async () => {
    const point = (latitude: number) => ({
      latitude,
      longitude: 10,
      timestamp: 1_767_225_600 + latitude,
      speed_kmh: 1,
      speed_mps: 1,
      speed_mph: 1,
      speed_knots: 1,
    });
    const post = async (token: string, latitude: number) => {
      const posted = await t.as(token).post('/v1/gps', point(latitude)).expect(201);
    };
    const crew = () => createUser(t.app, ['role_user', 'role_developer', 'role_api_full_access']);
    const [first, second] = [await crew(), await crew()];
    const [firstKey, secondKey] = [
      await createApiKey(t.app, first.token, { name: 'crew 1', scopes: ['gps:write'] }),
      await createApiKey(t.app, second.token, { name: 'crew 2', scopes: ['gps:write'] }),
    ];
    const device = (await t.as(admin).post('/v1/devices', { name: 'Shared boat', api_key_id: firstKey.id }).expect(201))
      .body.data;
    await post(firstKey.key, 1);
    await post(firstKey.key, 2);
    // The boat passes to the second crew: the device is linked to their key from now on.
    const relinked = await t.as(admin).patch(`/v1/devices/${device.id}`, { api_key_id: secondKey.id }).expect(200);
    await post(secondKey.key, 3);

    const exported = async (token: string) =>
      JSON.parse(
        (await unzip((await t.as(token).get('/v1/user/export', AGENT)).bytes)).get('data.json')!.toString('utf8'),
      );
    const [mine, theirs] = [await exported(second.token), await exported(first.token)];
    expect(mine.devices).toEqual([expect.objectContaining({ id: device.id })]);
    expect(mine.gpsPoints.map((p: { latitude: number; deviceId: string }) => [p.latitude, p.deviceId])).toEqual([
      [3, device.id],
    ]);
    expect(theirs.devices).toEqual([]);
    expect(theirs.gpsPoints.map((p: { latitude: number }) => p.latitude)).toEqual([1, 2]);
    // The boat still belongs to the first crew (it was never handed over): the point the second sent is theirs too.
    expect(mine.ownedDevices).toEqual([]);
    expect(mine.ownedDevicePoints).toEqual([]);
    expect(theirs.ownedDevices).toEqual([expect.objectContaining({ id: device.id, ownerId: first.id })]);
    expect(theirs.ownedDevicePoints.map((p: { latitude: number }) => p.latitude)).toEqual([3]);
  });

  it('holds the devices the user owns and the points others sent to them, each point once', async () => {
    const owner = await createUser(t.app);
    const friend = await createUser(t.app);
    const api = t.as(owner.token);
    const phone = (await api.post('/v1/devices', { name: 'Phone' }).expect(201)).body.data;
    const theirs = (await t.as(friend.token).post('/v1/devices', { name: 'Friend' }).expect(201)).body.data;
    await t.as(friend.token).post(`/v1/devices/${theirs.id}/shares`, { user_id: owner.id, level: 'full' }).expect(201);
    const at = (minute: number) => Math.floor(Date.parse('2026-11-20T10:00:00Z') / 1000) + minute * 60;
    const point = (deviceId: string, minute: number) => ({
      device_id: deviceId,
      latitude: 50 + minute,
      longitude: 8,
      timestamp: at(minute),
      speed_kmh: 0,
      speed_mps: 0,
      speed_mph: 0,
      speed_knots: 0,
    });
    await api.post('/v1/gps', point(phone.id, 2)).expect(201); // sent by the owner
    await t.as(admin).post('/v1/gps', point(phone.id, 3)).expect(201); // sent by someone else
    await t.database.db // sent by nobody (the system key, or before senders were recorded)
      .insertInto('gps_points')
      .values({ ...point(phone.id, 1), timestamp: new Date(at(1) * 1000) })
      .execute();
    await t.as(friend.token).post('/v1/gps', point(theirs.id, 4)).expect(201); // shared with the owner, not theirs

    const files = await unzip((await api.get('/v1/user/export', AGENT).expect(200)).bytes);
    const data = JSON.parse(files.get('data.json')!.toString('utf8'));
    expect(data.devices).toEqual([]);
    expect(data.ownedDevices).toEqual([
      expect.objectContaining({ id: phone.id, name: 'Phone', ownerId: owner.id, apiKeyId: null }),
    ]);
    const where = (p: { deviceId: string; latitude: number }) => [p.deviceId, p.latitude];
    expect(data.gpsPoints.map(where)).toEqual([[phone.id, 52]]);
    expect(data.ownedDevicePoints.map(where)).toEqual([
      [phone.id, 51],
      [phone.id, 53],
    ]);
    const report = await pdfText(files.get('report.pdf')!);
    expect(report).toContain('Devices you own: 1');
    expect(report).toContain('GPS points of your devices sent by others: 2');
    const logged = await t.database.db
      .selectFrom('audit_events')
      .select('metadata')
      .where('user_id', '=', owner.id)
      .where('event_type', '=', 'data_exported')
      .executeTakeFirstOrThrow();
    expect(logged.metadata).toMatchObject({ gps_points: 3 });
  });

  it("writes the report in the user's language and lists earlier exports in data.json", async () => {
    const user = await createUser(t.app);
    expect((await t.as(user.token).patch(`/v1/users/${user.id}/locale`, { locale: 'de' })).status).toBe(200);
    expect((await t.as(user.token).get('/v1/user/export', AGENT)).status).toBe(200);
    const second = await t.as(user.token).get('/v1/user/export', AGENT);
    const files = await unzip(second.bytes);
    expect(JSON.parse(files.get('data.json')!.toString('utf8')).exportLogs).toEqual([
      expect.objectContaining({ locale: 'de', exportFormat: 'zip' }),
    ]);
    const report = await pdfText(files.get('report.pdf')!);
    expect(report).toContain('Ihre persönlichen Daten');
    expect(report).toContain('Von Ihnen gesendete GPS-Punkte: 0');
  });

  it('answers 403 auth.user_required to a credential that belongs to no user', async () => {
    const key = await ownerlessKey(t, ['export:read']);
    for (const url of ['/v1/user/export', '/v1/user/export/logs'] as const)
      expect((await t.as(key).get(url, AGENT)).body).toMatchObject({ code: 'auth.user_required' });
  });

  it('works with an API key of the user holding export:read (the default user role has it); needs credentials', async () => {
    const user = await createUser(t.app, ['role_user', 'role_developer']);
    const key = await createApiKey(t.app, user.token, { name: 'export', scopes: ['export:read'] });
    expect((await t.as(key.key).get('/v1/user/export', AGENT)).status).toBe(200);
    // A key made for something else (a device) does not carry its owner's data away.
    const device = await createApiKey(t.app, user.token, { name: 'integrations', scopes: ['integrations:read'] });
    for (const url of ['/v1/user/export', '/v1/user/export/logs'] as const)
      expect((await t.as(device.key).get(url, AGENT)).body).toEqual(forbidden('export:read'));
    expect((await t.as(null).get('/v1/user/export')).status).toBe(401);
  });
});

describe('GET /v1/user/export/logs', () => {
  it('clamps limit to 1..100 and pages with offset', async () => {
    const user = await createUser(t.app);
    for (let i = 0; i < 3; i++) {
      expect((await t.as(user.token).get('/v1/user/export', AGENT)).status).toBe(200);
      t.clock.advance(1000);
    }
    const page = async (query: Options<'get', '/v1/user/export/logs'>['query'] = {}) =>
      (
        await t
          .as(user.token)
          .get('/v1/user/export/logs', { ...AGENT, query })
          .expect(200)
      ).body;
    expect((await page()).logs).toHaveLength(3);
    const first = await page({ limit: 0 });
    expect({ count: first.logs.length, total: first.total, hasMore: first.hasMore }).toEqual({
      count: 1,
      total: 3,
      hasMore: true,
    });
    expect((await page({ limit: 5000 })).logs).toHaveLength(3);
    const last = await page({ limit: 2, offset: 2 });
    expect({ count: last.logs.length, hasMore: last.hasMore }).toEqual({ count: 1, hasMore: false });
    const times = (await page()).logs.map((log: { exportedAt: string }) => log.exportedAt);
    expect(times).toEqual([...times].sort().reverse());
    const bad = await t.as(user.token).get('/v1/user/export/logs?limit=abc', AGENT).expect(400);
    expect(bad.body.message).toContain('limit');
  });
});

describe('a failure before the first byte', () => {
  it('answers 500 export.failed and sends no archive', async () => {
    const broken = await buildTestApp();
    try {
      const user = await createUser(broken.app);
      await sql`drop table export_logs`.execute(broken.database.db);
      const response = await broken.as(user.token).get('/v1/user/export');
      expect({ status: response.status, body: response.body }).toEqual({
        status: 500,
        body: {
          error: 'InternalServerError',
          message: 'The export could not be generated; nothing was sent. Try again later',
          code: 'export.failed',
        },
      });
    } finally {
      await broken.close();
    }
  });
});
