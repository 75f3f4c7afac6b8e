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
import { createUser } from '../../../test/helpers.js';

/**
 * API keys on the Account page (issue 49, item 1): each with its scopes, device and last use; a key revoked, and a
 * key without scopes made only after the warning.
 */
let setup: ConsoleInChromium | undefined;
beforeAll(async () => {
  setup = await startConsoleInChromium();
});
afterAll(() => stopConsoleInChromium(setup), 180_000);

const SPEEDS = { speed_kmh: 12, speed_mps: 3.33, speed_mph: 7.46, speed_knots: 6.48 };
const nowSecs = () => Math.floor(Date.now() / 1000);

/** A browser context signed in as this user, on the page the console lands on. */
async function signedIn(user: { username: string; password: string }) {
  const context = await setup!.browser.newContext({ viewport: VIEWPORTS.desktop });
  const { page, problems } = await openConsole(context, setup!.base);
  await signIn(page, user.username, user.password);
  await page.locator('#sign-out').waitFor();
  return { context, page, problems };
}

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

describe('API keys in the console', { timeout: 120_000 }, () => {
  it('lists every API key on the Account page with its scopes, device and last use, and revokes one', async () => {
    const { t } = setup!;
    const name = `Phone ${Date.now()}`;
    const { owner, api, key } = await withPhone(name);
    const spare = (await api.post('/v1/api-keys', { name: 'Spare', scopes: ['gps:read_own'] }).expect(201)).body;
    const { context, page, problems } = await signedIn(owner);
    await page.getByRole('link', { name: 'Account' }).click();
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
});
