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
 * Devices managed where they are seen, and API keys on the Account page (issue 49, item 1): a device renamed,
 * recoloured, given another icon, switched off and deleted from the map's list; its key replaced (the old key
 * refused at once, the new one shown with the apps' settings); a key revoked on the Account page, and a key without
 * scopes made only after the warning.
 */
let setup: ConsoleInChromium | undefined;
beforeAll(async () => {
  setup = await startConsoleInChromium();
});
afterAll(() => stopConsoleInChromium(setup), 180_000);

const SPEEDS = { speed_kmh: 12, speed_mps: 3.33, speed_mph: 7.46, speed_knots: 6.48 };
const nowSecs = () => Math.floor(Date.now() / 1000);

const signedIn = (user: { username: string; password: string }, options: { colorScheme?: 'dark' } = {}) =>
  signedInContext(setup!, user, options);

/** A user of the User role with a phone as Connect a device makes it: a key of gps:write_own and its device. */
async function withPhone(name: string) {
  const { t } = setup!;
  const owner = await createUser(t.app);
  const api = t.as(owner.token);
  const key = (await api.post('/v1/api-keys', { name: `Device: ${name}`, scopes: ['gps:write_own'] }).expect(201)).body;
  const device = (await api.post('/v1/devices', { name, api_key_id: key.id }).expect(201)).body.data;
  const point = { latitude: 54.32, longitude: 10.14, timestamp: nowSecs(), ...SPEEDS };
  await t.as(key.key).post('/v1/gps', point).expect(201);
  return { owner, api, key, device };
}

/** The device's dialog, opened from its Edit button in the map's list. */
async function openDialog(page: Page, name: string) {
  await page.getByRole('button', { name: `Edit ${name}` }).click();
  const dialog = page.getByRole('dialog', { name });
  await dialog.waitFor();
  return dialog;
}

describe('devices and API keys in the console', { timeout: 120_000 }, () => {
  it('renames, recolours, switches off and deletes a device from the map; the dialog says first what stays', async () => {
    const name = `Van ${Date.now()}`;
    const { owner, api, device } = await withPhone(name);
    // A sailor: speeds in knots, the speed limit too.
    await api.patch('/v1/users/me/preferences', { speed_unit: 'knots' }).expect(200);
    const { context, page, problems } = await signedIn(owner);
    const dialog = await openDialog(page, name);
    expect(await dialog.getByLabel('Colour chosen by Waygate').isChecked()).toBe(true);
    expect(await dialog.getByLabel('Colour', { exact: true }).isDisabled()).toBe(true);

    const renamed = `${name} (Anna)`;
    await dialog.getByLabel('Name', { exact: true }).fill(renamed);
    await dialog.getByLabel('Description').fill('Ford Transit, HH-WG 303');
    await dialog.getByLabel('Icon').selectOption('van');
    await dialog.getByLabel('Colour chosen by Waygate').uncheck();
    await dialog.getByLabel('Colour', { exact: true }).fill('#d4380d');
    await dialog.getByLabel('Offline after (minutes)').fill('30');
    await dialog.getByLabel('Speed limit (kn)').fill('10');
    await dialog.getByLabel('Active').uncheck();
    await dialog.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('dialog', { name: renamed }).waitFor();
    const saved = (await api.get(`/v1/devices/${device.id}`).expect(200)).body.data;
    expect([saved.name, saved.description, saved.icon, saved.color, saved.is_active]).toEqual([
      renamed,
      'Ford Transit, HH-WG 303',
      'van',
      '#d4380d',
      false,
    ]);
    // 10 knots are 18.52 km/h, as the API keeps speeds.
    expect([saved.offline_after_minutes, saved.speed_limit_kmh?.toFixed(2)]).toEqual([30, '18.52']);
    // The list names it anew, marked inactive, and so does its marker.
    const entry = page.locator('.devices li').filter({ hasText: renamed });
    await expect.poll(() => entry.locator('.name').textContent()).toBe(`${renamed} (inactive)`);
    await page.locator(`.leaflet-marker-icon[title="${renamed}"]`).waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'devices-dialog');
    await page.setViewportSize(VIEWPORTS.desktop);
    // (The list draws the rows in view anew after a resize, which takes the focus from what it draws.)
    await page.waitForTimeout(500);
    // Escape closes the dialog and gives the focus back to the device's Edit button (drawn anew with its new name).
    await page.keyboard.press('Escape');
    await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
    expect(await page.evaluate("document.activeElement.getAttribute('aria-label')")).toBe(`Edit ${renamed}`);

    // Deleting: what becomes of the points and the key is said before the button, which asks once more.
    await openDialog(page, renamed);
    const deleting = page.getByRole('region', { name: 'Delete device' });
    expect(await deleting.locator('p').textContent()).toBe(
      'Its GPS points stay, without a device: they no longer appear on the map or in History (trips keep theirs). ' +
        'Whoever it is shared with no longer sees it. Its API key is not revoked: revoke it on the Account page.',
    );
    await deleting.getByRole('button', { name: `Delete device: ${renamed}` }).click();
    expect(await api.get(`/v1/devices/${device.id}`).expect(200)).toBeTruthy();
    await deleting.getByRole('button', { name: `Really delete: ${renamed}` }).click();
    await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
    await expect.poll(() => entry.count()).toBe(0);
    expect(await page.locator(`.leaflet-marker-icon[title="${renamed}"]`).count()).toBe(0);
    await api.get(`/v1/devices/${device.id}`).expect(404);
    expect(problems).toEqual([]);
    await context.close();
  });

  it("replaces a device's key: the old key is refused at once, the new one shown once with the apps' settings", async () => {
    const { t } = setup!;
    const name = `Boat ${Date.now()}`;
    const { owner, api, key, device } = await withPhone(name);
    const { context, page, problems } = await signedIn(owner);
    const dialog = await openDialog(page, name);
    const section = dialog.getByRole('region', { name: 'API key' });
    expect(await section.locator('p').first().textContent()).toBe(
      'The app on the device sends with its API key. A new key replaces it: the old key stops working at once, so ' +
        'the app reports again only once it has the new key.',
    );
    await section.getByRole('button', { name: `Replace key: ${name}` }).click();
    await section.getByRole('button', { name: `Really replace the key: ${name}` }).click();
    const shown = section.locator('#device-key code');
    await shown.waitFor();
    const newKey = (await shown.textContent())!;
    expect(newKey).not.toBe(key.key);
    expect(await section.locator('p').first().textContent()).toBe(
      `New key for ${name}: the old key no longer works. Set up the app again with these settings.`,
    );
    // The settings of each app carry the new key; the OwnTracks QR code is drawn.
    expect(await section.getByRole('region', { name: 'Overland (iOS)' }).locator('dd code').nth(1).textContent()).toBe(
      newKey,
    );
    await expect
      .poll(() =>
        section.locator('img.qr').evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth),
      )
      .toBeGreaterThan(0);

    // The old key is refused from the next request on; the new one reports to the same device.
    // (Close to the first: a marker out of view is not in the page.)
    const point = { latitude: 54.3201, longitude: 10.1401, timestamp: nowSecs(), ...SPEEDS };
    await t.as(key.key).post('/v1/gps', point).expect(401);
    const sent = (await t.as(newKey).post('/v1/gps', point).expect(201)).body.data;
    expect(sent.device_id).toBe(device.id);
    // The point moves the marker (and draws the device's list entry anew, its Edit button with it).
    await page.locator(`.leaflet-marker-icon[data-device="${device.id}"][data-latitude="54.3201"]`).waitFor();
    const keys = (await api.get('/v1/api-keys').expect(200)).body.data;
    expect(keys.map((k) => [k.name, k.scopes])).toEqual([[`Device: ${name}`, ['gps:write_own']]]);
    expect(keys[0]!.id).not.toBe(key.id);
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'devices-new-key');
    await page.setViewportSize(VIEWPORTS.desktop);

    expect(problems).toEqual([]);
    await context.close();
  });

  it('lists every API key on the Account page with its scopes, device and last use, and revokes one', async () => {
    const { t } = setup!;
    const name = `Phone ${Date.now()}`;
    const { owner, api, key } = await withPhone(name);
    const spare = (await api.post('/v1/api-keys', { name: 'Spare', scopes: ['gps:read_own'] }).expect(201)).body;
    const { context, page, problems } = await signedIn(owner);
    await page.getByRole('link', { name: 'Account', exact: true }).click();
    const keys = page.locator('li.key');
    await expect.poll(() => keys.count()).toBe(2);
    const phoneKey = keys.filter({ hasText: `Device: ${name}` });
    const used = (await api.get('/v1/api-keys').expect(200)).body.data.find((k) => k.id === key.id)!.last_used_at!;
    const usedText = await page.evaluate(
      (iso) => new Date(iso).toLocaleString('en', { dateStyle: 'short', timeStyle: 'medium' }),
      used,
    );
    expect(await phoneKey.locator('p').textContent()).toBe(`gps:write_own · device ${name} · last used ${usedText}`);
    expect(await keys.filter({ hasText: 'Spare' }).locator('p').textContent()).toBe(
      'gps:read_own · no device · never used',
    );
    expect(await axeViolations(page)).toEqual([]);
    await page.locator('#keys-title').scrollIntoViewIfNeeded();
    await screenshot(page, 'devices-account-keys');
    await page.setViewportSize(VIEWPORTS.desktop);

    // Revoke asks once more; then the key is gone and refused.
    await phoneKey.getByRole('button', { name: `Revoke: Device: ${name}` }).click();
    await phoneKey.getByRole('button', { name: `Really revoke: Device: ${name}` }).click();
    await expect.poll(() => keys.count()).toBe(1);
    const left = (await api.get('/v1/api-keys').expect(200)).body.data;
    expect(left.map((k) => k.id)).toEqual([spare.id]);
    const point = { latitude: 54.4, longitude: 10.2, timestamp: nowSecs(), ...SPEEDS };
    await t.as(key.key).post('/v1/gps', point).expect(401);

    // A key without scopes: the first click only warns what it can do, the second makes it.
    await page.getByLabel('Key name').fill('Bare');
    await page.getByRole('button', { name: 'Create key' }).click();
    const warning = page.locator('.warning');
    await warning.waitFor();
    expect(await warning.textContent()).toBe(
      'This key has no scopes: until it gets some (or a role), it can call only routes that need no permission, ' +
        'such as reading your own account (GET /v1/users/me). It cannot send or read positions. Choose scopes ' +
        'above, or click again to create it without.',
    );
    expect((await api.get('/v1/api-keys').expect(200)).body.data).toHaveLength(1);
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'devices-no-scopes-warning');
    await page.setViewportSize(VIEWPORTS.desktop);
    await page.getByRole('button', { name: 'Create key without scopes' }).click();
    await page.locator('#new-key').waitFor();
    await expect.poll(() => keys.count()).toBe(2);
    expect(await keys.filter({ hasText: 'Bare' }).locator('p').textContent()).toBe(
      'no scopes · no device · never used',
    );
    const bare = (await api.get('/v1/api-keys').expect(200)).body.data.find((k) => k.name === 'Bare')!;
    expect(bare.scopes).toEqual([]);
    expect(await warning.count()).toBe(0);
    expect(problems).toEqual([]);
    await context.close();
  });

  it('speaks German in the dark: the device dialog and the keys', async () => {
    const name = `Rad ${Date.now()}`;
    const { owner, api } = await withPhone(name);
    await api.patch(`/v1/users/${owner.id}/locale`, { locale: 'de' }).expect(200);
    const { context, page, problems } = await signedIn(owner, { colorScheme: 'dark' });
    await page.getByRole('button', { name: `${name} bearbeiten` }).click();
    const dialog = page.getByRole('dialog', { name });
    await dialog.getByRole('heading', { name: 'Name, Aussehen und Zustand' }).waitFor();
    expect(await dialog.getByRole('region', { name: 'Gerät löschen' }).locator('p').textContent()).toMatch(
      /^Seine GPS-Punkte bleiben, ohne Gerät/,
    );
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'devices-dialog-de-dark');
    await page.setViewportSize(VIEWPORTS.desktop);
    await page.keyboard.press('Escape');
    await page.getByRole('link', { name: 'Konto' }).click();
    await page
      .locator('li.key')
      .filter({ hasText: `Device: ${name}` })
      .getByRole('button', { name: /^Widerrufen/ })
      .waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await page.locator('#keys-title').scrollIntoViewIfNeeded();
    await screenshot(page, 'devices-account-keys-de-dark');
    expect(problems).toEqual([]);
    await context.close();
  });
});
