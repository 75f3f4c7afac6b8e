import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  openConsole,
  screenshot,
  signIn,
  startConsoleInChromium,
  stopConsoleInChromium,
  VIEWPORTS,
  type ConsoleInChromium,
} from '../../../test/console-browser.js';
import type { Client } from '../../../test/client.js';
import { TEST_ADMIN, type TestApp } from '../../../test/helpers.js';

/**
 * Names users choose are text wherever the console shows them: in lists, in Leaflet's tooltips and popups.
 * Each name below is markup that, parsed, would add a link, a form, an image and a refresh to another site.
 */
const MARKUP =
  '<a href="https://evil.example/">x</a><meta http-equiv="refresh" content="0;url=https://evil.example/"><form><input name=q></form><img src=x>';
/** The same for names of at most 100 characters (API keys, roles, OAuth clients): everything but the form. */
const SHORT = '<a href=//evil.example>x</a><meta http-equiv=refresh content=0;//evil.example><img src=x>';
/** What any of them would leave in the page if parsed. */
const PARSED = ['a[href*=evil]', 'meta[http-equiv]', 'form input[name=q]', 'img[src="x"]'];

let setup: ConsoleInChromium | undefined;
let t: TestApp;
let base: string;
let browser: Browser;
let api: Client;

beforeAll(async () => {
  setup = await startConsoleInChromium();
  ({ t, base, browser } = setup);
  api = t.as(setup.admin);
});
afterAll(() => stopConsoleInChromium(setup), 180_000);

/** The page shows `text` literally, nothing of it was parsed, and the page is still the console. */
async function expectText(page: Page, text: string) {
  await expect.poll(async () => (await page.locator('body').textContent())?.includes(text)).toBe(true);
  expect(await Promise.all(PARSED.map((selector) => page.locator(selector).count()))).toEqual(PARSED.map(() => 0));
  expect(new URL(page.url()).origin).toBe(base);
}

it('shows markup in every user-chosen name as text: lists, tooltips, popups', { timeout: 180_000 }, async () => {
  const device = (await api.post('/v1/devices', { name: MARKUP }).expect(201)).body.data;
  await api
    .post('/v1/gps', {
      device_id: device.id,
      latitude: 54.32,
      longitude: 10.14,
      timestamp: Math.floor(Date.now() / 1000),
      altitude: 0,
      heading: 90,
      speed_kmh: 18,
      speed_mps: 5,
      speed_mph: 11.18,
      speed_knots: 9.72,
    })
    .expect(201);
  await api.post('/v1/geofences', { name: MARKUP, latitude: 54.32, longitude: 10.14, radius_km: 1 }).expect(201);
  await api.post('/v1/trips', { name: MARKUP }).expect(201);
  await api.post('/v1/api-keys', { name: SHORT, scopes: ['gps:read'] }).expect(201);
  await api.post('/v1/roles', { name: SHORT, description: MARKUP }).expect(201);
  await api
    .post('/v1/oauth/clients', {
      name: SHORT,
      redirect_uris: ['https://app.example.org/callback'],
      client_type: 'confidential',
    })
    .expect(201);
  await api.post('/v1/settings', { key: 'markup.name', value: MARKUP, description: MARKUP }).expect(201);

  const context = await browser.newContext({ viewport: VIEWPORTS.desktop });
  // Anything the markup would fetch or open, were it parsed: the other site, or the image `x` beside the page.
  const strays: string[] = [];
  await context.route(/evil\.example|\/x$/, (route) => {
    strays.push(route.request().url());
    return route.abort();
  });
  const { page, problems } = await openConsole(context, base);
  page.on('framenavigated', (frame) => {
    if (frame === page.mainFrame() && new URL(frame.url()).origin !== base) strays.push(frame.url());
  });
  await signIn(page, 'admin', TEST_ADMIN.password);

  // The live map: the device list, and the marker's popup.
  const marker = page.locator(`.leaflet-marker-icon[data-device="${device.id}"]`);
  await marker.waitFor();
  await expectText(page, MARKUP);
  await marker.click();
  await page.locator('.leaflet-popup-content').waitFor();
  expect(await page.locator('.leaflet-popup-content strong').textContent()).toBe(MARKUP);
  await expectText(page, MARKUP);
  await screenshot(page, 'markup-map');

  // Geofences: the list, and the circle's tooltip on hover (its only circle, fitted into the middle of the map).
  await page.goto(`${base}/console/#/geofences`);
  await page.getByRole('button', { name: /^<a href/ }).waitFor();
  const map = (await page.locator('.geofence-map').boundingBox())!;
  await page.mouse.move(map.x + map.width / 2 + 5, map.y + map.height / 2 + 5);
  await page.mouse.move(map.x + map.width / 2, map.y + map.height / 2);
  await page.locator('.leaflet-tooltip').waitFor({ timeout: 10_000 });
  expect(await page.locator('.leaflet-tooltip').textContent()).toBe(MARKUP);
  await expectText(page, MARKUP);
  await page.setViewportSize(VIEWPORTS.desktop);
  await page.screenshot({ path: 'test-results/console/markup-geofence-tooltip.png' });

  // Trips: the table, and the opened trip's export bar.
  await page.goto(`${base}/console/#/trips`);
  await page.getByRole('button', { name: MARKUP, exact: true }).click();
  await page.locator('.exports strong').waitFor();
  expect(await page.locator('.exports strong').textContent()).toBe(MARKUP);
  await expectText(page, MARKUP);

  // History: the device picker.
  await page.goto(`${base}/console/#/history`);
  await page.getByRole('button', { name: 'Show track' }).waitFor();
  // The picker's devices arrive after the form is drawn: wait for the one named with markup.
  await page.locator('select[name=device] option', { hasText: 'evil.example' }).first().waitFor({ state: 'attached' });
  expect(await page.locator('select[name=device] option').allTextContents()).toContain(MARKUP);
  expect(await Promise.all(PARSED.map((selector) => page.locator(selector).count()))).toEqual(PARSED.map(() => 0));

  // Account: the API keys.
  await page.goto(`${base}/console/#/account`);
  await expectText(page, SHORT);

  // Administration: roles (name and description), OAuth clients, settings.
  await page.goto(`${base}/console/#/admin/roles`);
  await page.getByRole('button', { name: SHORT, exact: true }).click();
  await page.getByRole('heading', { name: SHORT, exact: true }).waitFor();
  await expectText(page, MARKUP);
  await page.goto(`${base}/console/#/admin/clients`);
  await expectText(page, SHORT);
  await page.goto(`${base}/console/#/admin/settings`);
  await expectText(page, MARKUP);
  await screenshot(page, 'markup-settings');

  await page.waitForTimeout(300);
  expect(strays).toEqual([]);
  expect(new URL(page.url()).origin).toBe(base);
  expect(problems).toEqual([]);
  await context.close();
});
