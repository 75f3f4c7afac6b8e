import type { Browser } from 'playwright-core';
import { generate } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  axeViolations,
  openConsole as open,
  screenshot,
  SHOTS,
  signIn,
  startConsoleInChromium,
  stopConsoleInChromium,
  VIEWPORTS,
  type ConsoleInChromium,
} from '../../../test/console-browser.js';
import type { RequestBody } from '../../../test/client.js';
import { createUser, TEST_ADMIN, type TestApp } from '../../../test/helpers.js';
import { gpsloggerUrl } from '../../../console/js/trackers.js';

let t: TestApp;
let base: string;
let browser: Browser;
let admin: string;
let tiles: ConsoleInChromium['tiles'];
let setup: ConsoleInChromium | undefined;
const openConsole = (context: Parameters<typeof open>[0]) => open(context, base);

beforeAll(async () => {
  setup = await startConsoleInChromium();
  ({ t, base, browser, admin, tiles } = setup);
});
afterAll(() => stopConsoleInChromium(setup), 180_000);

const nowSecs = () => Math.floor(Date.now() / 1000);
const point = (latitude: number, longitude: number, extra: Record<string, unknown> = {}) => ({
  latitude,
  longitude,
  altitude: 0,
  heading: 90,
  timestamp: nowSecs(),
  speed_kmh: 18,
  speed_mps: 5,
  speed_mph: 11.18,
  speed_knots: 9.72,
  ...extra,
});

async function createDevice(name: string): Promise<string> {
  return (await t.as(admin).post('/v1/devices', { name }).expect(201)).body.data.id;
}

async function postPoint(token: string, body: RequestBody<'post', '/v1/gps'>) {
  return (await t.as(token).post('/v1/gps', body).expect(201)).body.data;
}

// A loaded machine (Chromium, PGlite and the app on two shared cores) is slow; each test gets two minutes.
describe('web console in Chromium', { timeout: 120_000 }, () => {
  it('serves the page with a strict CSP and its assets under a content hash, cached for good', async () => {
    const root = await fetch(`${base}/`, { redirect: 'manual' });
    expect(root.status).toBe(302);
    expect(root.headers.get('location')).toBe('/console/');
    const page = await fetch(`${base}/console/`);
    const csp = page.headers.get('content-security-policy')!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).toContain(new URL(tiles.template.replace(/\{.\}/g, '0')).origin);
    const html = await page.text();
    const script = /src="(\/console\/assets\/[0-9a-f]{12}\/js\/app\.js)"/.exec(html)![1]!;
    const asset = await fetch(`${base}${script}`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(asset.headers.get('content-type')).toMatch(/^text\/javascript/);
    const revalidated = await fetch(`${base}${script}`, { headers: { 'if-none-match': asset.headers.get('etag')! } });
    expect(revalidated.status).toBe(304);
    const leaflet = await fetch(`${base}${script.replace('js/app.js', 'vendor/leaflet/leaflet-src.esm.js')}`);
    expect(leaflet.status).toBe(200);
    const stale = await fetch(`${base}/console/assets/000000000000/js/app.js`);
    expect(stale.status).toBe(404);
    expect(((await stale.json()) as { code: string }).code).toBe('console.asset_not_found');
  });

  it("refuses a wrong password with the API's message, signs in, and shows a posted device moving live", async () => {
    const name = `Kutter ${Date.now()}`;
    const deviceId = await createDevice(name);
    await postPoint(admin, { ...point(54.32, 10.14), device_id: deviceId });
    const context = await browser.newContext({ viewport: VIEWPORTS.desktop });
    const { page, problems } = await openConsole(context);

    await signIn(page, 'admin', 'wrong-password-1');
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').textContent()).toBe('Invalid credentials');
    await signIn(page, TEST_ADMIN.email, TEST_ADMIN.password);

    const marker = page.locator(`.leaflet-marker-icon[aria-label="${name}"]`);
    await marker.waitFor();
    const at = async () => [
      Number(await marker.getAttribute('data-latitude')),
      Number(await marker.getAttribute('data-longitude')),
    ];
    await expect.poll(at).toEqual([54.32, 10.14]);
    const entry = page.locator('.devices').getByRole('button', { name: new RegExp(`^${name}`) });
    await expect.poll(() => entry.textContent()).toContain('Moving · now · 18 km/h');
    expect(tiles.served.length).toBeGreaterThan(0);
    await page.getByText('Live updates on').waitFor();

    const before = await marker.boundingBox();
    await postPoint(admin, { ...point(54.33, 10.16), device_id: deviceId });
    await expect.poll(at, { timeout: 2000 }).toEqual([54.33, 10.16]);
    expect(await marker.boundingBox()).not.toEqual(before);

    // The list is the keyboard way in: its entry opens the device's details on the map.
    await entry.focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator('.leaflet-popup-content').textContent()).toContain(name);
    await expect.poll(() => page.locator('.leaflet-popup-content').textContent()).toContain('18 km/h');
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'map');

    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.getByRole('heading', { name: 'Sign in to Waygate' }).waitFor();
    expect(await page.evaluate("localStorage.getItem('waygate.session')")).toBeNull();
    expect(problems).toEqual([]);
    await context.close();
  });

  it('connect a device: creates a device and a gps:write key that then records points on it', async () => {
    const context = await browser.newContext({ viewport: VIEWPORTS.desktop });
    const { page, problems } = await openConsole(context);
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'sign-in');
    await page.setViewportSize(VIEWPORTS.desktop);
    await signIn(page, 'admin', TEST_ADMIN.password);
    await page.getByRole('link', { name: 'Connect a device' }).click();
    const name = `Phone ${Date.now()}`;
    await page.getByLabel('Device name').fill(name);
    await page.getByRole('button', { name: 'Create device and key' }).click();
    const key = (await page.locator('#device-key code').textContent())!;
    expect(key).toMatch(/\S{20,}/);
    await page.getByText(`${base}/v1/ingest/osmand`).first().waitFor();
    // GPSLogger's URL from the same source docs/gps.md is checked against (trackers.test.ts replays it).
    await page.getByText(gpsloggerUrl(base, key), { exact: true }).waitFor();
    await expect.poll(() => page.evaluate("document.querySelector('img.qr').naturalWidth")).toBeGreaterThan(0);
    const link = await page.getByRole('link', { name: 'Open in OwnTracks' }).getAttribute('href');
    const inline = JSON.parse(Buffer.from(decodeURIComponent(link!.split('inline=')[1]!), 'base64').toString());
    expect(inline).toMatchObject({
      _type: 'configuration',
      mode: 3,
      url: `${base}/v1/ingest/owntracks`,
      auth: true,
      password: key,
    });
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'connect');

    const recorded = await postPoint(key, point(48.14, 11.58));
    const device = (await t.as(admin).get(`/v1/devices/${recorded.device_id}`).expect(200)).body.data;
    expect(device.name).toBe(name);
    const scopes = (await t.as(admin).get('/v1/api-keys').expect(200)).body.data.find(
      (k) => k.name === `Device: ${name}`,
    )?.scopes;
    expect(scopes).toEqual(['gps:write']);
    expect(problems).toEqual([]);
    await context.close();
  });

  it('speaks German to a user whose locale is de, and shows only the pages they may use', async () => {
    const user = await createUser(t.app, ['role_user']);
    await t.as(user.token).patch(`/v1/users/${user.id}/locale`, { locale: 'de' }).expect(200);
    const context = await browser.newContext({ viewport: VIEWPORTS.phone, colorScheme: 'dark' });
    const { page, problems } = await openConsole(context);
    await signIn(page, user.username, user.password);
    await page.getByRole('button', { name: 'Abmelden', exact: true }).waitFor();
    expect(await page.getByRole('link', { name: 'Verwaltung' }).count()).toBe(0);
    expect(await page.evaluate('document.documentElement.lang')).toBe('de');
    expect(await axeViolations(page)).toEqual([]);
    await page.screenshot({ path: `${SHOTS}/user-de-dark-phone.png` });
    expect(problems).toEqual([]);
    await context.close();
  });

  it("signs in with the two-factor step (a backup code) and shows the API's message for a wrong code", async () => {
    const user = await createUser(t.app, ['role_user']);
    const api = t.as(user.token);
    const { secret } = (await api.post('/v1/users/me/2fa/setup', {}).expect(200)).body;
    const code = await generate({ secret, epoch: Math.floor(Date.now() / 1000) });
    const [backupCode] = (await api.post('/v1/users/me/2fa/verify', { code }).expect(200)).body.backup_codes;
    const context = await browser.newContext({ viewport: VIEWPORTS.phone, locale: 'en-GB' });
    const { page, problems } = await openConsole(context);
    await signIn(page, user.username, user.password);
    const field = page.getByLabel('Code from your authenticator app or a backup code');
    await field.fill('000000');
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').textContent()).toMatch(/code/i);
    expect(await axeViolations(page)).toEqual([]);
    await page.screenshot({ path: `${SHOTS}/two-factor-phone.png` });
    await field.fill(backupCode!);
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('button', { name: 'Sign out', exact: true }).waitFor();
    // A user with the User role lands on the map (issue 43): the account is one link away.
    await page.getByRole('link', { name: 'Account', exact: true }).click();
    await page.getByRole('heading', { name: /^Account/ }).waitFor();
    expect(problems).toEqual([]);
    await context.close();
  });

  it('an admin draws a geofence, moves a trip along its states, revokes a session and bans a user; every page passes axe', async () => {
    const target = await createUser(t.app, ['role_user']);
    const api = t.as(admin);
    const trip = (await api.post('/v1/trips', { name: `Run ${Date.now()}` }).expect(201)).body.data;
    const tripName = trip.name;
    const context = await browser.newContext({ viewport: VIEWPORTS.desktop });
    const { page, problems } = await openConsole(context);
    await signIn(page, 'admin', TEST_ADMIN.password);
    await page.getByRole('link', { name: 'Map' }).waitFor();

    await page.goto(`${base}/console/#/geofences`);
    const fence = `Harbour ${Date.now()}`;
    await page.locator('.geofence-map').click({ position: { x: 200, y: 150 } });
    await page.getByLabel('Name').fill(fence);
    await page.getByLabel('Radius (km)').fill('0.8');
    await page.getByRole('button', { name: 'Save geofence' }).click();
    await page.getByRole('button', { name: new RegExp(`^${fence}`) }).waitFor();
    const saved = (await api.get('/v1/geofences', { query: { limit: 100 } }).expect(200)).body.data.find(
      (g) => g.name === fence,
    );
    expect(saved).toMatchObject({ name: fence, radius_km: 0.8 });
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'geofences');

    await page.goto(`${base}/console/#/trips`);
    await page.getByRole('button', { name: `Set to active: ${tripName}` }).click();
    await page.getByRole('button', { name: `Set to paused: ${tripName}` }).waitFor();
    expect((await api.get(`/v1/trips/${trip.id}`).expect(200)).body.data.status).toBe('active');
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'trips');

    await page.goto(`${base}/console/#/admin`);
    await page.getByLabel('Search users').fill(target.username);
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByLabel(`Reason for banning ${target.username}`).fill('spam');
    await page.getByRole('button', { name: `Ban: ${target.username}` }).click();
    await page.getByRole('button', { name: `Unban: ${target.username}` }).waitFor();
    expect((await api.get(`/v1/users/${target.id}/ban`).expect(200)).body.is_banned).toBe(true);
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'admin');

    await page.goto(`${base}/console/#/history`);
    await page.getByRole('button', { name: 'Show track' }).waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'history');

    // A user revokes their other session (the one createUser signed in over HTTP) on the account page.
    const owner = await createUser(t.app, ['role_user']);
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await signIn(page, owner.username, owner.password);
    // A user with the User role lands on the map (issue 43): the account is one link away.
    await page.getByRole('link', { name: 'Account', exact: true }).click();
    await page.getByRole('heading', { name: /^Account/ }).waitFor();
    const revoke = page.getByRole('button', { name: /^Revoke:/ });
    await revoke.waitFor();
    await revoke.click();
    await expect.poll(() => revoke.count()).toBe(0);
    expect((await t.as(owner.token).get('/v1/users/me')).status).toBe(401);
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'account');
    expect(problems).toEqual([]);
    await context.close();
  });
});
