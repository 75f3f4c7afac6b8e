import { readFileSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { generate } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  axeViolations,
  openConsole,
  screenshot,
  signIn,
  startConsoleInChromium,
  stopConsoleInChromium,
  VIEWPORTS,
  type ConsoleInChromium,
} from '../../../test/console-browser.js';
import { createUser, TEST_ADMIN, type TestApp } from '../../../test/helpers.js';

/** The console's history (track, timeline, export, import), account and administration pages in Chromium. */
let t: TestApp;
let base: string;
let browser: Browser;
let admin: string;
let setup: ConsoleInChromium | undefined;

beforeAll(async () => {
  setup = await startConsoleInChromium();
  ({ t, base, browser, admin } = setup);
});
afterAll(() => stopConsoleInChromium(setup), 180_000);

async function signedIn(
  identifier: string,
  password: string,
): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
  const context = await browser.newContext({ viewport: VIEWPORTS.desktop, acceptDownloads: true });
  const { page, problems } = await openConsole(context, base);
  await signIn(page, identifier, password);
  await page.getByRole('button', { name: 'Sign out', exact: true }).waitFor();
  return { context, page, problems };
}

/** The admin's history page showing the device of this name over one day. */
async function showTrack(deviceName: string, day: string) {
  const signed = await signedIn('admin', TEST_ADMIN.password);
  const { page } = signed;
  await page.goto(`${base}/console/#/history`);
  await page.getByLabel('Device', { exact: true }).selectOption({ label: deviceName });
  await page.getByLabel('From', { exact: true }).fill(`${day}T00:00`);
  await page.getByLabel('To', { exact: true }).fill(`${day}T23:59`);
  await page.getByRole('button', { name: 'Show track' }).click();
  return signed;
}

const speeds = (kmh: number) => ({
  speed_kmh: kmh,
  speed_mps: kmh / 3.6,
  speed_mph: kmh / 1.609344,
  speed_knots: kmh / 1.852,
});

const GPX = (times: string[]) =>
  `<?xml version="1.0"?><gpx version="1.1" creator="test" xmlns="http://www.topografix.com/GPX/1/1"><trk><trkseg>${times
    .map((time, i) => `<trkpt lat="${53.55 + i * 0.001}" lon="${9.99 + i * 0.001}"><time>${time}</time></trkpt>`)
    .join('')}</trkseg></trk></gpx>`;

describe('web console tools in Chromium', { timeout: 120_000 }, () => {
  it('history: draws a range of a device as a speed-coloured track, scrubs it, exports it as CSV and imports a GPX file', async () => {
    const name = `Barge ${Date.now()}`;
    const device = (await t.as(admin).post('/v1/devices', { name }).expect(201)).body.data.id;
    const start = Date.UTC(2026, 0, 15, 8, 0, 0) / 1000;
    const points = Array.from({ length: 300 }, (_, i) => ({
      device_id: device,
      latitude: 53.5 + i * 0.0005,
      longitude: 9.9 + Math.sin(i / 20) * 0.01,
      timestamp: start + i * 10,
      altitude: 0,
      heading: 0,
      ...speeds((i % 100) * 0.9),
    }));
    expect((await t.as(admin).post('/v1/gps/batch', points).expect(200)).body).toMatchObject({ stored: 300 });

    const { context, page, problems } = await showTrack(name, '2026-01-15');
    await expect.poll(() => page.locator('.history .map').getAttribute('data-points')).toBe('300');
    expect(await page.locator('.summary').textContent()).toMatch(/^300 points: /);
    const timeline = page.getByLabel('Timeline', { exact: true });
    await timeline.fill('150');
    expect(await timeline.getAttribute('aria-valuetext')).toMatch(/45 km\/h$/);
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'history');

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download CSV' }).click(),
    ]);
    const csv = readFileSync((await download.path())!, 'utf8')
      .trim()
      .split('\r\n');
    expect(csv).toHaveLength(301);
    expect(download.suggestedFilename()).toMatch(/\.csv$/);

    await page.getByText('Import a file').click();
    await page.getByLabel('File', { exact: true }).setInputFiles({
      name: 'ride.gpx',
      mimeType: 'application/gpx+xml',
      buffer: Buffer.from(GPX(['2026-01-15T20:00:00Z', '2026-01-15T20:01:00Z', 'no time'])),
    });
    await page.getByRole('button', { name: 'Import', exact: true }).click();
    const report = page.locator('details.import [role=status]');
    await report.getByText('Imported ride.gpx: 2 points.').waitFor();
    expect(await report.textContent()).toContain('2 imported, 0 already there, 1 refused');
    await expect.poll(() => page.locator('.history .map').getAttribute('data-points')).toBe('302');
    expect(await axeViolations(page)).toEqual([]);
    expect(problems).toEqual([]);
    await context.close();
  });

  it('history: a long track is drawn thinned for the map, and read again in more detail when zoomed in', async () => {
    const name = `Ferry ${Date.now()}`;
    const device = (await t.as(admin).post('/v1/devices', { name }).expect(201)).body.data.id;
    const start = Date.UTC(2026, 1, 3, 8, 0, 0) / 1000;
    // A hundred points within 55 m (waiting at a pier: a few pixels at the fitted zoom), then a hundred 111 m apart.
    const latitudes = [
      ...Array.from({ length: 100 }, (_, i) => 53.5 + i * 0.000005),
      ...Array.from({ length: 100 }, (_, i) => 53.501 + i * 0.001),
    ];
    const points = latitudes.map((latitude, i) => ({
      device_id: device,
      latitude,
      longitude: 9.9,
      timestamp: start + i * 10,
      altitude: 0,
      heading: 0,
      ...speeds(20),
    }));
    expect((await t.as(admin).post('/v1/gps/batch', points).expect(200)).body).toMatchObject({ stored: 200 });

    const { context, page, problems } = await showTrack(name, '2026-02-03');
    const map = page.locator('.history .map');
    await expect.poll(() => map.getAttribute('data-points')).toBe('200');
    const drawn = Number(await map.getAttribute('data-drawn'));
    expect(drawn).toBeLessThan(200);
    expect(await page.locator('.summary').textContent()).toMatch(
      new RegExp(`^200 points \\(${drawn} drawn at this zoom\\): `),
    );
    // (The map fits the track with a margin: one zoom level in may still be the zoom the track was thinned for.)
    // Each click waits for the zoom before it (Leaflet ignores a click during its zoom animation).
    for (let i = 0; i < 2; i++) {
      const before = await map.getAttribute('data-zoom');
      await page.getByRole('button', { name: 'Zoom in' }).click();
      await expect.poll(() => map.getAttribute('data-zoom')).not.toBe(before);
    }
    await expect.poll(async () => Number(await map.getAttribute('data-drawn'))).toBeGreaterThan(drawn);
    expect(problems).toEqual([]);
    await context.close();
  });

  it('account: sets up two-factor authentication from its QR code, changes the password and the email, downloads the data export', async () => {
    const user = await createUser(t.app, ['role_user']);
    const { context, page, problems } = await signedIn(user.username, user.password);
    // A user with the User role lands on the map (issue 43): the account is one link away.
    await page.getByRole('link', { name: 'Account', exact: true }).click();
    await page.getByRole('heading', { name: /^Account/ }).waitFor();
    await page.getByRole('button', { name: 'Set up two-factor authentication' }).click();
    const qr = page.getByRole('img', { name: /^QR code of the two-factor secret/ });
    await expect
      .poll(() => qr.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth))
      .toBeGreaterThan(0);
    const secret = (await page.locator('#totp-secret').textContent())!;
    await page
      .getByLabel('6-digit code from your app')
      .fill(await generate({ secret, epoch: Math.floor(Date.now() / 1000) }));
    await page.getByRole('button', { name: 'Turn on' }).click();
    await page.locator('ul.codes li').first().waitFor();
    expect(await page.locator('ul.codes li').count()).toBeGreaterThanOrEqual(8);
    expect((await t.as(user.token).get('/v1/users/me/2fa/status').expect(200)).body.enabled).toBe(true);

    // (The key form's password, asked only when needed, has the same label: the one of the password section.)
    await page.locator('input[name="current-password"]').fill(user.password);
    await page.getByLabel('New password (at least 8 characters)').fill('a new long passphrase');
    await page.getByLabel('New password again').fill('a new long passphrase');
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByText(/^Password changed\. Other sessions signed out: 1\./).waitFor();
    const relogin = await t
      .as(null)
      .post('/v1/auth/login', { identifier: user.username, password: 'a new long passphrase' })
      .expect(200);
    expect(relogin.body.requires_2fa).toBe(true);

    await page.getByLabel('New email address').fill(`new-${user.username}@example.org`);
    await page.getByRole('button', { name: 'Send confirmation link' }).click();
    await page.getByText(`Waiting for confirmation of new-${user.username}@example.org`).waitFor();
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download my data' }).click(),
    ]);
    expect(download.suggestedFilename()).toMatch(/\.zip$/);
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'account-security');
    expect(problems).toEqual([]);
    await context.close();
  });

  it('an administrator assigns a role on the users tab; the user turns a security notice off and deletes their own account', async () => {
    const user = await createUser(t.app, ['role_user']);
    const admin_ = await signedIn('admin', TEST_ADMIN.password);
    await admin_.page.goto(`${base}/console/#/admin/users`);
    await admin_.page.getByLabel('Search users').fill(user.username);
    await admin_.page.getByRole('button', { name: 'Search', exact: true }).click();
    await admin_.page.getByText(`Roles of ${user.username}`).click();
    await admin_.page.getByLabel(`Role to assign to ${user.username}`).selectOption({ label: 'Developer' });
    await admin_.page.locator('details[open]').getByRole('button', { name: 'Assign role' }).click();
    await admin_.page.getByRole('button', { name: `Remove Developer from ${user.username}` }).waitFor();
    const held = (await t.as(admin).get(`/v1/users/${user.id}/roles`).expect(200)).body.roles;
    expect(held.map((role) => role.id).sort()).toEqual(['role_developer', 'role_user']);
    expect(await axeViolations(admin_.page)).toEqual([]);
    await screenshot(admin_.page, 'admin-users');
    expect(admin_.problems).toEqual([]);
    await admin_.context.close();

    const { context, page, problems } = await signedIn(user.username, user.password);
    // A user with the User role lands on the map (issue 43): the account is one link away.
    await page.getByRole('link', { name: 'Account', exact: true }).click();
    await page.getByRole('heading', { name: /^Account/ }).waitFor();
    const keyNotice = page.getByRole('switch', { name: 'Mail me when an API key is created for me' });
    await expect.poll(() => keyNotice.isEnabled()).toBe(true);
    await keyNotice.uncheck();
    await expect
      .poll(async () => (await t.as(user.token).get('/v1/users/me/security-notifications').expect(200)).body)
      .toEqual({ new_sign_in: true, new_api_key: false });
    await keyNotice.scrollIntoViewIfNeeded();
    await screenshot(page, 'account-notices');
    await page.getByLabel(`Type your username (${user.username}) to confirm`).fill(user.username);
    await page.getByLabel('Current password (empty if your account has none)').fill('not my password');
    await page.getByRole('button', { name: 'Delete my account' }).click();
    await page.getByRole('alert').getByText('current_password is not the password of this account').waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'account-data');
    await page.getByLabel('Current password (empty if your account has none)').fill(user.password);
    await page.getByRole('button', { name: 'Delete my account' }).click();
    await page
      .getByText(/^Your account is deleted and you are signed out\. It is removed for good on /)
      .first()
      .waitFor();
    const status = (await t.as(admin).get(`/v1/admin/users/${user.id}/deletion-status`).expect(200)).body;
    expect(status.is_scheduled_for_deletion).toBe(true);
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'account-deleted');
    expect(problems).toEqual([]);
    await context.close();
  });

  it("administration: a setting created (a refusal shown as the API's message) and deleted; deleted users restored and deleted for good", async () => {
    const { context, page, problems } = await signedIn('admin', TEST_ADMIN.password);
    await page.goto(`${base}/console/#/admin/settings`);
    const key = `fleet.unit_${Date.now()}`;
    const create = async () => {
      await page.getByLabel('Key (lower case letters, digits, . _ -)').fill(key);
      await page.getByLabel('Value (JSON)', { exact: true }).fill('"kmh"');
      await page.getByLabel('Public (listed without signing in)').check();
      await page.getByRole('button', { name: 'Create setting' }).click();
    };
    await create();
    await page.getByText(`${key} created.`).waitFor();
    const api = t.as(admin);
    const stored = await api.get(`/v1/settings/${key}`).expect(200);
    expect(stored.body.data).toMatchObject({ key, value: 'kmh', is_public: true });
    await create();
    await page.getByRole('alert').getByText(`Setting '${key}' already exists`).waitFor();
    await page.getByRole('button', { name: `Save: ${key}` }).waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'admin-settings-new');
    await page.getByRole('button', { name: `Delete: ${key}` }).click();
    await page.getByRole('button', { name: `Really delete: ${key}` }).click();
    await page.getByText(`${key} deleted.`).waitFor();
    expect((await api.get(`/v1/settings/${key}`)).status).toBe(404);

    const [kept, gone] = [await createUser(t.app, ['role_user']), await createUser(t.app, ['role_user'])];
    for (const user of [kept, gone]) await api.delete(`/v1/users/${user.id}`).expect(204);
    const deletion = (id: string) => api.get(`/v1/admin/users/${id}/deletion-status`);
    await page.getByRole('link', { name: 'Users', exact: true }).click();
    await page.getByRole('button', { name: `Restore: ${kept.username}` }).click();
    await page.getByText(`${kept.username} is restored and can sign in again.`).waitFor();
    expect((await deletion(kept.id).expect(200)).body.is_scheduled_for_deletion).toBe(false);
    await page.getByRole('button', { name: `Delete for good: ${gone.username}` }).click();
    await page.getByRole('button', { name: `Really delete for good: ${gone.username}` }).click();
    expect(await page.getByRole('alert').textContent()).toMatch(/reason/);
    await page.getByLabel(`Reason for deleting ${gone.username} for good`).fill('Asked for it in ticket 12');
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'admin-users-deleted');
    await page.getByRole('button', { name: `Really delete for good: ${gone.username}` }).click();
    await page.getByText(`${gone.username} is deleted for good.`).waitFor();
    expect((await deletion(gone.id)).status).toBe(404);
    expect(problems).toEqual([]);
    await context.close();
  });

  it("administration: roles and permissions, the activity log filtered, a report resolved, an OAuth client registered (a refusal shown as the API's message), a config value changed", async () => {
    const reporter = await createUser(t.app, ['role_user']);
    const asReporter = t.as(reporter.token);
    const [event] = (await asReporter.get('/v1/users/me/audit', { query: { limit: 1 } }).expect(200)).body.events;
    await asReporter
      .post(`/v1/users/me/audit/${event!.id}/report`, { reason: 'not_me', description: `Not me ${reporter.username}` })
      .expect(201);
    const { context, page, problems } = await signedIn('admin', TEST_ADMIN.password);

    await page.goto(`${base}/console/#/admin/roles`);
    const role = `Dispatcher ${Date.now()}`;
    await page.getByLabel('Role name').fill(role);
    await page.getByRole('button', { name: 'Create role' }).click();
    await page.getByRole('heading', { name: role }).waitFor();
    await page.getByLabel('Permission to give').selectOption({ label: 'Read (gps:read)' });
    await page.getByRole('button', { name: 'Give permission' }).click();
    await page.getByRole('button', { name: 'Take away: gps:read' }).waitFor();
    const api = t.as(admin);
    const roles = (await api.get('/v1/roles').expect(200)).body.data;
    const created = roles.find((r) => r.name === role)!;
    const granted = (await api.get(`/v1/roles/${created.id}/permissions`).expect(200)).body.data;
    expect(granted.map((p) => `${p.resource}:${p.action}`)).toEqual(['gps:read']);
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'admin-roles');

    await page.getByRole('link', { name: 'Activity log' }).click();
    await page.getByLabel('User (id, username or email)').fill(reporter.username);
    await page.getByRole('button', { name: 'Apply filters' }).click();
    // (The unfiltered page shows first: wait until every row is the reporter's.)
    await expect
      .poll(async () => new Set(await page.locator('tbody tr td:nth-child(3)').allTextContents()))
      .toEqual(new Set([reporter.username]));
    const report = page.locator('li.card', { hasText: `Not me ${reporter.username}` });
    await report.getByLabel('New status').selectOption('resolved');
    await report.getByLabel('Note to the user who reported').fill('Checked: a new phone.');
    await report.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => report.textContent()).toContain('resolved');
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'admin-audit');

    await page.getByRole('link', { name: 'OAuth clients' }).click();
    const client = `Fleet board ${Date.now()}`;
    await page.getByLabel('Name', { exact: true }).fill(client);
    await page.getByLabel('Redirect URIs (one a line)').fill('http://fleet.example.org/callback');
    await page.getByRole('button', { name: 'Register client' }).click();
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').textContent()).toMatch(/redirect/i);
    await page.getByLabel('Redirect URIs (one a line)').fill('https://fleet.example.org/callback');
    await page.getByRole('button', { name: 'Register client' }).click();
    expect((await page.locator('#client-secret').textContent())!.length).toBeGreaterThan(20);
    await page.getByRole('button', { name: `Switch off: ${client}` }).click();
    await page.getByRole('button', { name: `Switch on: ${client}` }).waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'admin-clients');

    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByLabel('Value of tracking.units (JSON)').fill('"imperial"');
    await page.getByRole('button', { name: 'Save: tracking.units' }).click();
    await page.getByText('tracking.units saved.').waitFor();
    const units = await api.get('/v1/system-config/tracking.units').expect(200);
    expect(units.body.data.value).toBe('imperial');
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'admin-settings');
    await api.patch('/v1/system-config/tracking.units', { value: 'metric' }).expect(200);
    expect(problems).toEqual([]);
    await context.close();
  });
});
