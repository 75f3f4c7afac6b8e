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
import { createRoleWith, createUser } from '../../../test/helpers.js';

/**
 * The console for self-service tracking, sharing and groups (issue 43): a registered user lands on the map with the
 * call to connect their phone, an owner shares a device through the sharing dialog, the grantee's device list says
 * by whom, how and until when, and a group is made and joined on the Groups page.
 */
let setup: ConsoleInChromium | undefined;
beforeAll(async () => {
  setup = await startConsoleInChromium();
});
afterAll(() => stopConsoleInChromium(setup), 180_000);

const SPEEDS = { speed_kmh: 12, speed_mps: 3.33, speed_mph: 7.46, speed_knots: 6.48 };
const nowSecs = () => Math.floor(Date.now() / 1000);

const signedIn = (username: string, password: string) => signedInContext(setup!, { username, password });

/** The names of the navigation's links. */
const navigation = (page: Page) => page.locator('#nav a').allTextContents();

/** A date as the console writes it in English (the browser's own formatting, as the page uses it). */
const dateInPage = (page: Page, iso: string) =>
  page.evaluate((value) => new Date(value).toLocaleDateString('en', { dateStyle: 'medium' }), iso);

describe('self-service tracking, sharing and groups in the console', { timeout: 120_000 }, () => {
  it('lands a registered user on the map with the call to connect a phone; the card goes once the phone reports', async () => {
    const { t } = setup!;
    // A role that tracks but may not make API keys (a phone needs one): the map and the tracking pages, and a card
    // that says whom to ask.
    const trackers = await createRoleWith(t.app, `Trackers ${Date.now()}`, [
      'devices:read_own',
      'devices:write_own',
      'gps:read_own',
      'gps:write_own',
      'trips:read_own',
      'geofences:read_own',
      'groups:read',
    ]);
    const ada = await createUser(t.app, [trackers]);
    const first = await signedIn(ada.username, ada.password);
    const card = first.page.locator('.connect-card');
    await card.getByRole('heading', { name: 'Connect your phone' }).waitFor();
    expect(await navigation(first.page)).toEqual([
      'Map',
      'History',
      'Trips',
      'Geofences',
      'Groups & sharing',
      'Account',
      'Passkeys',
    ]);
    expect(await first.page.locator('#nav a[aria-current="page"]').textContent()).toBe('Map');
    expect(await card.locator('p').first().textContent()).toBe(
      'A phone sends its positions with an API key, and your account may not create API keys yet: ask an administrator of this Waygate for that permission.',
    );
    // (History's import still opens: points from a file need no key.)
    expect(await card.getByRole('link').allTextContents()).toEqual(['Import history']);
    expect(await card.getByRole('button').count()).toBe(0);
    expect(await axeViolations(first.page)).toEqual([]);
    await screenshot(first.page, 'sharing-first-sign-in-no-keys');
    expect(first.problems).toEqual([]);
    await first.context.close();

    // A registered user (the User role, which may make keys of their own) is sent to Connect a device, which makes
    // a key of their own scope.
    const ben = await createUser(t.app);
    const { context, page, problems } = await signedIn(ben.username, ben.password);
    await page
      .locator('.connect-card')
      .getByText(/^Waygate gives you the settings for a tracking app/)
      .waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'sharing-first-sign-in');
    await page.locator('.connect-card').getByRole('link', { name: 'Connect your phone' }).click();
    await page.getByRole('heading', { name: 'Connect a device' }).waitFor();
    const name = `Ben's phone ${Date.now()}`;
    await page.getByLabel('Device name').fill(name);
    await page.getByRole('button', { name: 'Create device and key' }).click();
    const key = (await page.locator('#device-key code').textContent())!;
    const keys = (await t.as(ben.token).get('/v1/api-keys').expect(200)).body.data;
    expect(keys.map((k) => [k.name, k.scopes])).toEqual([[`Device: ${name}`, ['gps:write_own']]]);

    // Back on the map the card waits for the phone, and goes when its first point arrives over the WebSocket.
    await page.getByRole('link', { name: 'Map', exact: true }).click();
    await page.getByText('Live updates on').waitFor();
    await page.locator('.connect-card').getByText(`No position yet from ${name}.`, { exact: true }).waitFor();
    const entry = page.locator('.devices li').filter({ hasText: name });
    expect(await entry.locator('.whose').textContent()).toBe('Yours');
    const point = { latitude: 54.32, longitude: 10.14, timestamp: nowSecs(), ...SPEEDS };
    const sent = (await t.as(key).post('/v1/gps', point).expect(201)).body.data;
    const device = (await t.as(ben.token).get(`/v1/devices/${sent.device_id}`).expect(200)).body.data;
    expect([device.name, device.owner_id]).toEqual([name, ben.id]);
    await expect.poll(() => page.locator('.connect-card').count()).toBe(0);
    await expect.poll(() => entry.locator('.meta').textContent()).toBe('Moving · now · 12 km/h');
    expect(problems).toEqual([]);
    await context.close();
  });

  it('shares a device by username through the dialog; the grantee reads by whom, how and until when', async () => {
    const { t } = setup!;
    const owner = await createUser(t.app);
    const cleo = await createUser(t.app);
    const name = `Boat ${Date.now()}`;
    const device = (await t.as(owner.token).post('/v1/devices', { name }).expect(201)).body.data;
    const position = { device_id: device.id, latitude: 53.55, longitude: 9.99, timestamp: nowSecs(), ...SPEEDS };
    await t.as(owner.token).post('/v1/gps', position).expect(201);

    const mine = await signedIn(owner.username, owner.password);
    const entry = mine.page.locator('.devices li').filter({ hasText: name });
    expect(await entry.locator('.whose').textContent()).toBe('Yours');
    const share = entry.getByRole('button', { name: `Share ${name}` });
    await share.click();
    const dialog = mine.page.getByRole('dialog', { name: `Share ${name}` });
    await dialog.getByText('Not shared with anyone yet.').waitFor();

    // A username nobody has: the API's message at the field.
    const username = dialog.getByLabel('Username');
    await username.fill(`nobody-${Date.now()}`);
    await dialog.getByRole('button', { name: 'Share', exact: true }).click();
    await dialog.getByRole('alert').getByText('username names nobody').waitFor();
    expect(await username.getAttribute('aria-invalid')).toBe('true');
    expect(await username.getAttribute('aria-describedby')).toBe(await dialog.getByRole('alert').getAttribute('id'));

    // Cleo, at history of 7 days, until a day a month from now.
    const until = new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 10);
    await username.fill(cleo.username);
    await dialog.getByLabel('What they see').selectOption('history');
    await dialog.getByLabel('Days of history (empty: all)').fill('7');
    await dialog.getByLabel('Until (empty: no end)').fill(until);
    await dialog.getByRole('button', { name: 'Share', exact: true }).click();
    const row = dialog.locator('li.share').filter({ hasText: cleo.username });
    await row.waitFor();
    expect(await username.getAttribute('aria-invalid')).toBeNull();
    const endsAt = await mine.page.evaluate((day) => new Date(`${day}T23:59:59`).toISOString(), until);
    const untilText = await dateInPage(mine.page, endsAt);
    expect(await row.locator('p').textContent()).toBe(`${cleo.username} · history of 7 days, until ${untilText}`);
    const shares = async () => (await t.as(owner.token).get(`/v1/devices/${device.id}/shares`).expect(200)).body.data;
    expect((await shares()).map((s) => [s.grantee_name, s.level, s.history_days, s.expires_at])).toEqual([
      [cleo.username, 'history', 7, endsAt],
    ]);

    // Changed to full: the days and the end stay.
    await row.getByRole('button', { name: `Change: ${cleo.username}` }).click();
    await row.getByLabel('What they see').selectOption('full');
    await row.getByRole('button', { name: 'Save' }).click();
    await expect
      .poll(() => row.locator('p').textContent())
      .toBe(`${cleo.username} · full access, 7 days, until ${untilText}`);
    expect((await shares()).map((s) => [s.level, s.history_days, s.expires_at])).toEqual([['full', 7, endsAt]]);
    expect(await axeViolations(mine.page)).toEqual([]);
    await screenshot(mine.page, 'sharing-dialog');
    await mine.page.setViewportSize(VIEWPORTS.desktop);
    await mine.page.keyboard.press('Escape');
    await expect.poll(() => dialog.count()).toBe(0);
    // The button that opened the dialog has the focus again.
    expect(await mine.page.evaluate("document.activeElement.getAttribute('aria-label')")).toBe(`Share ${name}`);

    // The grantee's list: the device, shared by the owner, at full for 7 days until then.
    const theirs = await signedIn(cleo.username, cleo.password);
    const shared = theirs.page.locator('.devices li').filter({ hasText: name });
    expect(await shared.locator('.whose').textContent()).toBe(
      `Shared by ${owner.username}, full access, 7 days, until ${untilText}`,
    );
    expect(await shared.getByRole('button', { name: /^Share/ }).count()).toBe(0);
    await theirs.page.locator(`.leaflet-marker-icon[aria-label="${name}"]`).waitFor();
    expect(await theirs.page.locator('.connect-card').count()).toBe(0);
    expect(await axeViolations(theirs.page)).toEqual([]);
    await screenshot(theirs.page, 'sharing-shared-with-me');

    // A group: the owner makes it and invites Cleo (a username nobody has is refused at the field) …
    await mine.page.getByRole('link', { name: 'Groups & sharing' }).click();
    const group = `Family ${Date.now()}`;
    await mine.page.getByLabel('Group name').fill(group);
    await mine.page.getByRole('button', { name: 'Create group' }).click();
    const card = mine.page.locator('li.group').filter({ has: mine.page.getByRole('heading', { name: group }) });
    await card.waitFor();
    expect(await card.locator('ul.members li').allTextContents()).toEqual([`${owner.username} (admin, you)`]);
    const invitee = card.getByRole('textbox', { name: 'Invite by username or email' });
    await invitee.fill(`nobody-${Date.now()}`);
    await card.getByRole('button', { name: 'Invite', exact: true }).click();
    await card.getByRole('alert').getByText('No user has this username').waitFor();
    await invitee.fill(cleo.username);
    await card.getByRole('button', { name: 'Invite', exact: true }).click();
    await card.getByRole('heading', { name: 'Invited, no answer yet' }).waitFor();
    expect(await card.locator('ul.members').nth(1).locator('li > span').first().textContent()).toMatch(
      new RegExp(`^${cleo.username} \\(until `),
    );
    await mine.page.getByRole('heading', { name: 'I share' }).waitFor();
    expect(await axeViolations(mine.page)).toEqual([]);
    await screenshot(mine.page, 'sharing-groups-admin');
    // The share lists load after the groups: wait for their rows, not for the page.
    await expect
      .poll(() => mine.page.locator('ul.share-list').nth(1).locator('li > span').allTextContents())
      .toEqual([`${name} · with ${cleo.username}, full access, 7 days, until ${untilText}`]);

    // … and Cleo accepts on her Groups page, where she also reads what is shared with her.
    await theirs.page.getByRole('link', { name: 'Groups & sharing' }).click();
    const invitation = theirs.page.locator('.invitations li').filter({ hasText: group });
    await invitation.waitFor();
    expect(await invitation.locator('p').textContent()).toMatch(
      new RegExp(`^${group} · invited by ${owner.username}, open until `),
    );
    await expect
      .poll(() => theirs.page.locator('ul.share-list').first().textContent())
      .toBe(`${name} · by ${owner.username}, full access, 7 days, until ${untilText}`);
    await theirs.page.getByRole('button', { name: `Accept: ${group}` }).click();
    const joined = theirs.page.locator('li.group').filter({ has: theirs.page.getByRole('heading', { name: group }) });
    await joined.waitFor();
    expect(await joined.locator('ul.members li').allTextContents()).toEqual([
      `${owner.username} (admin)`,
      `${cleo.username} (you)`,
    ]);
    expect(await theirs.page.locator('.invitations li').count()).toBe(0);
    const groups = (await t.as(cleo.token).get('/v1/groups').expect(200)).body.data;
    expect(groups.map((g) => [g.name, g.member_count, g.is_admin])).toEqual([[group, 2, false]]);
    expect(await axeViolations(theirs.page)).toEqual([]);
    await screenshot(theirs.page, 'sharing-groups');
    expect(mine.problems).toEqual([]);
    expect(theirs.problems).toEqual([]);
    await mine.context.close();
    await theirs.context.close();
  });
});
