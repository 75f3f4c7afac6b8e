import type { Page } from 'playwright-core';
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
import { startFakeSmtp, tokenFromMail, type FakeSmtp } from '../../../test/fakes/smtp.js';
import { createUser } from '../../../test/helpers.js';

/**
 * A first run that leads somewhere (issue 49, item 3): the empty map offers to track this browser, which posts the
 * page's (faked) position through POST /v1/gps with a key of its own; the sign-in page leads to password reset and,
 * while registration is open, to sign-up; the session holds over a reload and in a second tab.
 */
let setup: ConsoleInChromium | undefined;
let smtp: FakeSmtp | undefined;
beforeAll(async () => {
  smtp = await startFakeSmtp();
  setup = await startConsoleInChromium({ smtpUrl: smtp.url });
});
afterAll(async () => {
  await stopConsoleInChromium(setup);
  await smtp?.close();
}, 180_000);

const HAMBURG = { latitude: 53.5511, longitude: 9.9937, accuracy: 12 };

/** The names of the visible links and buttons in `selector`. */
const actions = (page: Page, selector: string) =>
  page
    .locator(`${selector} :is(a, button):visible`)
    .evaluateAll((elements) => elements.map((element) => element.textContent));

describe('the first run in the console', { timeout: 120_000 }, () => {
  it("tracks this browser from the empty map: its position posted with a key of the device's own, until switched off", async () => {
    const { t, browser, base } = setup!;
    const ada = await createUser(t.app);
    const context = await browser.newContext({
      viewport: VIEWPORTS.desktop,
      colorScheme: 'dark',
      permissions: ['geolocation'],
      geolocation: HAMBURG,
    });
    const { page, problems } = await openConsole(context, base);
    await signIn(page, ada.username, ada.password);
    const card = page.locator('.connect-card');
    await card.getByRole('heading', { name: 'Connect your phone' }).waitFor();
    expect(await actions(page, '.connect-card')).toEqual([
      'Connect your phone',
      'Track this browser now',
      'Import history',
    ]);
    expect(await card.getByRole('link', { name: 'Import history' }).getAttribute('href')).toBe('#/history/import');
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'first-run-card');

    await card.getByRole('button', { name: 'Track this browser now' }).click();
    const panel = page.getByRole('region', { name: 'This browser' });
    const toggle = panel.getByRole('switch', { name: "Send this browser's position" });
    await panel.getByText('Positions sent: 1, the last at 53.5511, 9.9937 (within 12 m).').waitFor();
    expect(await toggle.isChecked()).toBe(true);
    expect(await panel.locator('details[open] p').textContent()).toBe(
      'While on, each position the browser reports goes to your device “This browser”: latitude, longitude and accuracy, with altitude, heading and speed when the browser knows them, and the time. It stops when you switch it off or leave the map.',
    );

    // A device of Ada's own with a key that may only write its points, as Connect a device makes; the point is the
    // page's position, written with that key.
    const api = t.as(ada.token);
    const devices = (await api.get('/v1/devices').expect(200)).body.data;
    expect(devices.map((d) => [d.name, d.owner_id, d.icon])).toEqual([['This browser', ada.id, 'person']]);
    const keys = (await api.get('/v1/api-keys').expect(200)).body.data;
    expect(keys.map((k) => [k.id, k.name, k.scopes])).toEqual([
      [devices[0]!.api_key_id, 'Device: This browser', ['gps:write_own']],
    ]);
    const current = async () =>
      (await api.get('/v1/gps/current/devices').expect(200)).body.map((p) => [
        p.device_id,
        p.latitude,
        p.longitude,
        p.accuracy,
      ]);
    expect(await current()).toEqual([[devices[0]!.id, 53.5511, 9.9937, 12]]);
    const kept = (await page.evaluate("JSON.parse(localStorage.getItem('waygate.browser-tracker'))")) as {
      userId: string;
      deviceId: string;
      keyId: string;
      key: string;
    };
    expect([kept.userId, kept.deviceId, kept.keyId]).toEqual([ada.id, devices[0]!.id, keys[0]!.id]);
    expect(kept.key).toMatch(/^wg_/);

    // The first position fills the map: the card goes, the panel with its switch stays.
    await expect.poll(() => card.count(), { timeout: 10_000 }).toBe(0);
    const marker = page.locator(`.leaflet-marker-icon[data-device="${devices[0]!.id}"]`);
    await expect.poll(() => marker.getAttribute('data-latitude'), { timeout: 10_000 }).toBe('53.5511');
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'first-run-tracking');

    // The browser moves: the next position follows.
    await context.setGeolocation({ latitude: 53.56, longitude: 10.01, accuracy: 8 });
    await panel.getByText('Positions sent: 2, the last at 53.56, 10.01 (within 8 m).').waitFor();
    expect(await current()).toEqual([[devices[0]!.id, 53.56, 10.01, 8]]);
    await expect.poll(() => marker.getAttribute('data-latitude'), { timeout: 10_000 }).toBe('53.56');

    // Switched off, nothing more is sent; switched on again, the same device and key go on.
    await toggle.click();
    await panel.getByText('Off: nothing is sent.').waitFor();
    await context.setGeolocation({ latitude: 53.6, longitude: 10.1, accuracy: 5 });
    await page.waitForTimeout(1500);
    expect(await current()).toEqual([[devices[0]!.id, 53.56, 10.01, 8]]);
    await toggle.click();
    // (Chromium's emulated position reaches a new watch when it changes: the browser moves on until one is sent.)
    let step = 0;
    await expect
      .poll(
        async () => {
          await context.setGeolocation({ latitude: 53.61 + step++ / 1000, longitude: 10.11, accuracy: 5 });
          return panel.getByText(/^Positions sent: [3-9], the last at 53\.6/).count();
        },
        { timeout: 20_000, interval: 500 },
      )
      .toBe(1);
    expect((await api.get('/v1/api-keys').expect(200)).body.data.map((k) => k.id)).toEqual([keys[0]!.id]);
    await page.waitForTimeout(1000);
    const last = await current();
    expect(last.map(([device]) => device)).toEqual([devices[0]!.id]);
    expect(last[0]![1]).toBeGreaterThanOrEqual(53.6);

    // Leaving the map stops it; signing out forgets the kept key.
    await page.getByRole('link', { name: 'Account', exact: true }).click();
    await page.getByRole('heading', { name: 'Account' }).first().waitFor();
    await context.setGeolocation({ latitude: 53.7, longitude: 10.2, accuracy: 5 });
    await page.waitForTimeout(1500);
    expect(await current()).toEqual(last);
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.getByRole('heading', { name: 'Sign in to Waygate' }).waitFor();
    expect(await page.evaluate("localStorage.getItem('waygate.browser-tracker')")).toBeNull();
    expect(problems).toEqual([]);
    await context.close();
  });

  it('tracks this browser in German', async () => {
    const { t, browser, base } = setup!;
    const user = await createUser(t.app);
    const context = await browser.newContext({
      viewport: VIEWPORTS.phone,
      locale: 'de-DE',
      permissions: ['geolocation'],
      geolocation: HAMBURG,
    });
    const { page, problems } = await openConsole(context, base);
    await page.getByLabel('Benutzername oder E-Mail').fill(user.username);
    await page.getByLabel('Passwort').fill(user.password);
    await page.getByRole('button', { name: 'Anmelden' }).click();
    await page.getByRole('button', { name: 'Diesen Browser jetzt verfolgen' }).click();
    const panel = page.getByRole('region', { name: 'Dieser Browser' });
    await panel.getByText('Gesendete Positionen: 1, die letzte bei 53,5511, 9,9937 (auf 12 m genau).').waitFor();
    expect(await panel.getByRole('switch', { name: 'Position dieses Browsers senden' }).isChecked()).toBe(true);
    // On a phone what is sent is folded, one tap away.
    await panel.getByText('Was gesendet wird').click();
    await panel
      .getByText(/^Solange eingeschaltet, geht jede Position, die der Browser meldet, an Ihr Gerät „Dieser Browser“/)
      .waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'first-run-tracking-de');
    expect(problems).toEqual([]);
    await context.close();
  });

  it('leads from the sign-in page to password reset and sign-up, offering sign-up only while it is open', async () => {
    const { t, browser, base, admin } = setup!;
    const ada = await createUser(t.app);
    const context = await browser.newContext({ viewport: VIEWPORTS.desktop });
    const { page, problems } = await openConsole(context, base);
    const links = page.locator('.signin-links');
    await links.getByRole('link', { name: 'Create an account' }).waitFor();
    expect(await actions(page, '.signin-links')).toEqual(['Forgot your password?', 'Create an account']);
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'first-run-signin-links');

    // Password reset: the address, then the same words whether it has an account or not, and the mail.
    await links.getByRole('link', { name: 'Forgot your password?' }).click();
    await page.getByRole('heading', { name: 'Reset your password' }).waitFor();
    expect(await page.title()).toBe('Reset your password · Waygate');
    const email = `${ada.username}@example.org`;
    await page.getByLabel('Email').fill(email);
    await page.getByRole('button', { name: 'Send the link' }).click();
    await page
      .getByRole('status')
      .getByText(`If an account has the address ${email}, a link to set a new password is on its way.`, {
        exact: false,
      })
      .waitFor();
    expect(tokenFromMail(await smtp!.waitFor(email))).toMatch(/\S{20,}/);
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'first-run-reset');
    await page.getByRole('link', { name: 'Back to sign-in' }).click();
    await page.getByRole('heading', { name: 'Sign in to Waygate' }).waitFor();

    // Sign-up: a taken name is refused at its field; then the mail, whose link confirms the account, which signs in.
    await links.getByRole('link', { name: 'Create an account' }).click();
    await page.getByRole('heading', { name: 'Create an account' }).waitFor();
    const name = `cleo_${Date.now() % 1_000_000}`;
    await page.getByLabel('Email').fill(`${name}@example.org`);
    await page.getByLabel('Username').fill(ada.username);
    await page.getByLabel('Password').fill('correct-horse-battery');
    await page.getByRole('button', { name: 'Create account' }).click();
    const username = page.getByLabel('Username');
    await page.getByRole('alert').getByText('Username is already taken').waitFor();
    expect(await username.getAttribute('aria-invalid')).toBe('true');
    expect(await username.getAttribute('aria-describedby')).toBe(await page.getByRole('alert').getAttribute('id'));
    expect(await axeViolations(page)).toEqual([]);
    await username.fill(name);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page
      .getByText(`Almost done: a link to confirm your address went to ${name}@example.org.`, { exact: false })
      .waitFor();
    await screenshot(page, 'first-run-signup');
    const token = tokenFromMail(await smtp!.waitFor(`${name}@example.org`));
    await t.as().post('/v1/auth/verify-email', { token }).expect(200);
    await page.getByRole('link', { name: 'Back to sign-in' }).click();
    await signIn(page, name, 'correct-horse-battery');
    await page.locator('.connect-card').getByRole('heading', { name: 'Connect your phone' }).waitFor();
    expect(problems).toEqual([]);
    await context.close();

    // In German, and in the dark.
    const german = await browser.newContext({ viewport: VIEWPORTS.phone, locale: 'de-DE', colorScheme: 'dark' });
    const de = await openConsole(german, base);
    await de.page.locator('.signin-links').getByRole('link', { name: 'Konto anlegen' }).waitFor();
    expect(await actions(de.page, '.signin-links')).toEqual(['Passwort vergessen?', 'Konto anlegen']);
    await de.page.getByRole('link', { name: 'Konto anlegen' }).click();
    await de.page.getByRole('heading', { name: 'Konto anlegen' }).waitFor();
    expect(await de.page.getByText('Mindestens 8 Zeichen.').count()).toBe(1);
    expect(await axeViolations(de.page)).toEqual([]);
    await screenshot(de.page, 'first-run-signup-de');
    await de.page.getByRole('link', { name: 'Zurück zur Anmeldung' }).click();
    await de.page.getByRole('link', { name: 'Passwort vergessen?' }).click();
    await de.page.getByRole('heading', { name: 'Passwort zurücksetzen' }).waitFor();
    expect(await axeViolations(de.page)).toEqual([]);
    expect(de.problems).toEqual([]);
    await german.close();

    // Registration closed on the email platform: no way to sign up is offered.
    await t.as(admin).patch('/v1/platforms/email/settings', { registration_enabled: false }).expect(200);
    try {
      const closed = await browser.newContext({ viewport: VIEWPORTS.desktop });
      const { page: later, problems: laterProblems } = await openConsole(closed, base);
      await later.getByRole('link', { name: 'Forgot your password?' }).waitFor();
      await later.waitForLoadState('networkidle');
      expect(await actions(later, '.signin-links')).toEqual(['Forgot your password?']);
      expect(laterProblems).toEqual([]);
      await closed.close();
    } finally {
      await t.as(admin).patch('/v1/platforms/email/settings', { registration_enabled: true }).expect(200);
    }
  });

  it('keeps the session over a reload and in a second tab; signing out in one tab signs out the other', async () => {
    const { t, browser, base } = setup!;
    const ben = await createUser(t.app);
    const context = await browser.newContext({ viewport: VIEWPORTS.desktop });
    const first = await openConsole(context, base);
    await signIn(first.page, ben.username, ben.password);
    const signOut = (page: Page) => page.getByRole('button', { name: 'Sign out', exact: true });
    await signOut(first.page).waitFor();
    const token = (await first.page.evaluate("localStorage.getItem('waygate.session')")) as string | null;
    expect(token).toMatch(/^ses_/);
    expect(await first.page.evaluate('sessionStorage.length')).toBe(0);

    // A second tab opens signed in, on the map; a reload of the first stays signed in.
    const second = await openConsole(context, base);
    await signOut(second.page).waitFor();
    expect(await second.page.locator('#nav a[aria-current="page"]').textContent()).toBe('Map');
    await first.page.reload();
    await signOut(first.page).waitFor();
    expect(await axeViolations(second.page)).toEqual([]);
    await screenshot(second.page, 'first-run-second-tab');

    // Signing out in the second tab ends the session, and the first tab shows the sign-in page.
    await signOut(second.page).click();
    await second.page.getByRole('heading', { name: 'Sign in to Waygate' }).waitFor();
    await first.page.getByRole('heading', { name: 'Sign in to Waygate' }).waitFor();
    expect(await first.page.locator('form').getByText('You are signed out.').count()).toBe(1);
    await t.as(token!).get('/v1/users/me').expect(401);
    // Signing in again in one tab signs the other in too.
    await signIn(first.page, ben.username, ben.password);
    await signOut(second.page).waitFor();
    expect(first.problems).toEqual([]);
    expect(second.problems).toEqual([]);
    await context.close();
  });
});
