import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  axeViolations,
  screenshot,
  signedInContext,
  startConsoleInChromium,
  stopConsoleInChromium,
  VIEWPORTS,
  type ConsoleInChromium,
} from '../../../test/console-browser.js';
import { createUser } from '../../../test/helpers.js';

/**
 * Preferences per user (issue 49, item 6): chosen on the Account page, kept on the account, and applied where the
 * console shows a speed, a position or a time. The browser's own time zone is UTC here, so a chosen one shows.
 */
let setup: ConsoleInChromium | undefined;
beforeAll(async () => {
  setup = await startConsoleInChromium();
});
afterAll(() => stopConsoleInChromium(setup), 180_000);

/** 18 km/h is 9.7 knots; 53.55012, 9.99301 is 53° 33.007′ N, 9° 59.581′ E, or 53° 33′ 0.4″ N, 9° 59′ 34.8″ E. */
const POINT = {
  latitude: 53.55012,
  longitude: 9.99301,
  accuracy: 40,
  speed_kmh: 18,
  speed_mps: 5,
  speed_mph: 11.18,
  speed_knots: 9.72,
};

/** A user of the User role with a moving boat that reported just now. */
async function sailor() {
  const { t } = setup!;
  const user = await createUser(t.app);
  const api = t.as(user.token);
  const device = (await api.post('/v1/devices', { name: `Jolle ${Date.now()}` }).expect(201)).body.data;
  const timestamp = Math.floor(Date.now() / 1000);
  await api.post('/v1/gps', { ...POINT, device_id: device.id, timestamp }).expect(201);
  return { user, api, device };
}

/** Opens a page of the console, as its navigation does. */
const open = (page: Page, path: string) =>
  page.evaluate((hash) => {
    (globalThis as unknown as { location: { hash: string } }).location.hash = hash;
  }, `#/${path}`);

/** The map's details of the device (its popup), opened from the list. */
async function details(page: Page, name: string) {
  await open(page, 'map');
  await page
    .locator('.devices li button')
    .filter({ has: page.locator('.name', { hasText: name }) })
    .click();
  const popup = page.locator('.leaflet-popup-content');
  await popup.waitFor();
  return popup;
}

describe('preferences in the console', { timeout: 120_000 }, () => {
  it('shows speeds in knots, positions in degrees and minutes and times in the chosen zone once saved', async () => {
    const { user, api, device } = await sailor();
    const { context, page, problems } = await signedInContext(setup!, user, { timezoneId: 'UTC' });
    expect(await (await details(page, device.name)).textContent()).toContain('18 km/h · ± ');
    expect(await page.locator('.leaflet-popup-content').textContent()).toContain('53.55012, 9.99301');

    await open(page, 'account');
    const example = page.locator('#preferences-example');
    await example.waitFor();
    expect(await example.textContent()).toMatch(/^Shown as: 18 km\/h · 12\.4 km · .+ · 53\.55012, 9\.99301$/);
    expect(await page.getByLabel('Time zone', { exact: true }).inputValue()).toBe('');
    await page.getByLabel('Speed', { exact: true }).selectOption('knots');
    await page.getByLabel('Distance', { exact: true }).selectOption('nmi');
    await page.getByLabel('Time zone', { exact: true }).selectOption('Asia/Tokyo');
    await page.getByLabel('Coordinates', { exact: true }).selectOption('dm');
    // The example follows the choice before it is saved.
    expect(await example.textContent()).toMatch(/^Shown as: 10 kn · 6\.7 nmi · .+ · 53° 33\.007′ N, 9° 59\.581′ E$/);
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'preferences-account');
    await page.getByRole('button', { name: 'Save preferences' }).click();
    await expect.poll(() => page.locator('#status').textContent()).toBe('Preferences saved.');
    expect((await api.get('/v1/users/me/preferences').expect(200)).body.data).toEqual({
      speed_unit: 'knots',
      distance_unit: 'nmi',
      time_zone: 'Asia/Tokyo',
      coordinate_format: 'dm',
    });

    const popup = await details(page, device.name);
    expect(await popup.textContent()).toContain('9.7 kn · ± ');
    expect(await popup.textContent()).toContain('53° 33.007′ N, 9° 59.581′ E');
    const entry = page.locator('.devices li').filter({ hasText: device.name });
    expect(await entry.locator('.meta').textContent()).toMatch(/ · 10 kn$/);
    // The time in the list's tooltip is Tokyo's (UTC+9), not the browser's UTC.
    const time = entry.locator('time');
    const shown = new Date((await time.getAttribute('datetime'))!);
    const tokyo = new Date(shown.getTime() + 9 * 3_600_000);
    const hour = ((tokyo.getUTCHours() + 11) % 12) + 1; // English times have a 12-hour clock
    const minutes = String(tokyo.getUTCMinutes()).padStart(2, '0');
    expect(await time.getAttribute('title')).toContain(`${hour}:${minutes}:`);
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'preferences-map');
    expect(problems).toEqual([]);
    await context.close();
  });

  it('keeps them across a new sign-in, in German and dark, with seconds and O for east', async () => {
    const { user, api, device } = await sailor();
    await api.patch('/v1/users/me/preferences', { coordinate_format: 'dms', speed_unit: 'mph' }).expect(200);
    await api.patch(`/v1/users/${user.id}/locale`, { locale: 'de' }).expect(200);
    const { context, page, problems } = await signedInContext(setup!, user, {
      colorScheme: 'dark',
      viewport: VIEWPORTS.phone,
    });
    const popup = await details(page, device.name);
    expect(await popup.textContent()).toContain('11,2 mph · ± ');
    expect(await popup.textContent()).toContain('53° 33′ 0,4″ N, 9° 59′ 34,8″ O');

    await open(page, 'account');
    await page.locator('#preferences-example').waitFor();
    expect(await page.getByLabel('Geschwindigkeit', { exact: true }).inputValue()).toBe('mph');
    expect(await page.getByLabel('Koordinaten', { exact: true }).inputValue()).toBe('dms');
    await page.getByLabel('Entfernung', { exact: true }).selectOption('nmi');
    expect(await page.locator('#preferences-example').textContent()).toMatch(
      /^So angezeigt: 11 mph · 6,7 sm · .+ · 53° 33′ 0,4″ N, 9° 59′ 34,8″ O$/,
    );
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'preferences-account-de');
    expect(problems).toEqual([]);
    await context.close();
  });
});
