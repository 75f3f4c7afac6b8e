import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  axeViolations,
  openConsole,
  SHOTS,
  signedInContext,
  startConsoleInChromium,
  stopConsoleInChromium,
  VIEWPORTS,
  type ConsoleInChromium,
} from '../../../test/console-browser.js';
import { startFakeSmtp, tokenFromMail, type FakeSmtp } from '../../../test/fakes/smtp.js';
import { createRoleWith, createUser, TEST_ADMIN } from '../../../test/helpers.js';

/**
 * Administration that needs no JSON (issue 49, item 5): a user invited by mail from the Users page; each known
 * system config value edited in a field of its type, with its limits and description; the activity log naming users
 * and linking them; a role's permissions grouped by area. In English and light, and in German and dark, each at
 * desktop and phone width, axe clean.
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

const ADMIN = { username: TEST_ADMIN.username, password: TEST_ADMIN.password };

/**
 * The admin on an administration part (#/admin/<part>), in English and light unless `options` say otherwise. (In a
 * German browser, the sign-in page is German too.)
 */
async function adminOn(part: string, options: { locale?: string; colorScheme?: 'dark' } = {}) {
  const german = options.locale?.startsWith('de');
  const signedIn = german
    ? await openConsole(await setup!.browser.newContext({ viewport: VIEWPORTS.desktop, ...options }), setup!.base)
    : await signedInContext(setup!, ADMIN, options);
  const { page } = signedIn;
  if (german) {
    await page.getByLabel('Benutzername oder E-Mail').fill(ADMIN.username);
    await page.getByLabel('Passwort', { exact: true }).fill(ADMIN.password);
    await page.getByRole('button', { name: 'Anmelden' }).click();
    await page.locator('#sign-out').waitFor();
  }
  await page.goto(`${setup!.base}/console/#/admin/${part}`);
  return { ...signedIn, context: page.context() };
}

/**
 * Axe finds nothing at desktop and at phone width; the screenshots of both are written,
 * scrolled to `part` when given.
 */
async function looked(page: Page, name: string, part?: Locator) {
  for (const [size, viewport] of Object.entries(VIEWPORTS)) {
    await page.setViewportSize(viewport);
    await page.waitForTimeout(150);
    expect(await axeViolations(page)).toEqual([]);
    await part?.scrollIntoViewIfNeeded();
    await page.screenshot({ path: `${SHOTS}/${name}-${size}.png` });
  }
  await page.setViewportSize(VIEWPORTS.desktop);
}

/** The text that describes a field (its aria-describedby). */
async function descriptionOf(field: Locator) {
  const id = await field.getAttribute('aria-describedby');
  return id ? field.page().locator(`[id="${id}"]`).textContent() : null;
}

/** The values of these attributes of a field (null where it has none). */
const attributes = (field: Locator, names: string[]) => Promise.all(names.map((name) => field.getAttribute(name)));

/** Each area of the role shown: its heading, and each permission's name and code. */
const areasShown = (page: Page) =>
  page
    .locator('section.permission-area')
    .evaluateAll((sections) =>
      sections.map((section) => [
        section.querySelector('h3')?.textContent,
        [...section.querySelectorAll('li')].map(
          (li) => `${li.firstChild?.textContent} ${li.querySelector('code')?.textContent}`,
        ),
      ]),
    );

describe('administration without JSON', { timeout: 120_000 }, () => {
  it('invites a user by mail: the confirmed account is listed, signs in with the password given or sets its own', async () => {
    const { t } = setup!;
    const { context, page, problems } = await adminOn('users');
    const form = page.getByRole('form', { name: 'Invite a user' });
    expect(await form.locator('p').first().textContent()).toBe(
      'Waygate mails them a link to confirm their address. Their account exists once they follow it (within 24 ' +
        'hours), with the default role, and then appears in the list above. Sign-up must be open for this.',
    );
    expect(await descriptionOf(form.getByLabel('Password (optional)'))).toBe(
      'At least 8 characters; tell it to them. Left empty, they choose their own with “Forgot your password?” on ' +
        'the sign-in page once they have confirmed.',
    );

    // Without a password: they confirm, then set their own through the reset mail.
    const ada = `ada_${Date.now() % 1e9}`;
    await form.getByLabel('Username').fill(ada);
    await form.getByLabel('Email address').fill(`${ada}@example.org`);
    await form.getByRole('button', { name: 'Send invitation' }).click();
    await expect
      .poll(() => form.getByRole('status').textContent())
      .toBe(
        `Invitation sent to ${ada}@example.org. ${ada} appears in the list once they have confirmed their address.`,
      );
    expect(await form.getByLabel('Username').inputValue()).toBe('');
    await t
      .as()
      .post('/v1/auth/verify-email', { token: tokenFromMail(await smtp!.waitFor(`${ada}@example.org`)) })
      .expect(200);
    await t
      .as()
      .post('/v1/auth/reset-password', { email: `${ada}@example.org` })
      .expect(200);
    const reset = tokenFromMail(await smtp!.waitFor(`${ada}@example.org`, (mail) => /password/i.test(mail.subject)));
    await t
      .as()
      .post('/v1/auth/reset-password/complete', { token: reset, new_password: 'her own secret 1' })
      .expect(200);
    await t.as().post('/v1/auth/login', { identifier: ada, password: 'her own secret 1' }).expect(200);

    // With a password: they sign in with it once confirmed.
    const bo = `bo_${Date.now() % 1e9}`;
    await form.getByLabel('Username').fill(bo);
    await form.getByLabel('Email address').fill(`${bo}@example.org`);
    await form.getByLabel('Password (optional)').fill('given by the admin 7');
    await form.getByRole('button', { name: 'Send invitation' }).click();
    await expect.poll(() => form.getByRole('status').textContent()).toMatch(new RegExp(`^Invitation sent to ${bo}@`));
    await t
      .as()
      .post('/v1/auth/verify-email', { token: tokenFromMail(await smtp!.waitFor(`${bo}@example.org`)) })
      .expect(200);
    await t.as().post('/v1/auth/login', { identifier: bo, password: 'given by the admin 7' }).expect(200);

    // A taken username is refused at its field.
    await form.getByLabel('Username').fill(ada);
    await form.getByLabel('Email address').fill(`someone_else_${ada}@example.org`);
    await form.getByRole('button', { name: 'Send invitation' }).click();
    await expect.poll(() => descriptionOf(form.getByLabel('Username'))).toBe('Username is already taken');

    // Both are in the list once the page reads it again.
    await page.reload();
    await page.getByRole('cell', { name: ada, exact: true }).waitFor();
    await page.getByRole('cell', { name: bo, exact: true }).waitFor();
    await looked(page, 'admin-users-invite', form);
    expect(problems).toEqual([]);
    await context.close();
  });

  it('edits each known config value in a field of its type, within its limits; others stay JSON', async () => {
    const api = setup!.t.as(setup!.admin);
    const { context, page, problems } = await adminOn('settings');
    const config = page.getByRole('region', { name: 'System config' });
    const row = (key: string) => config.getByRole('row').filter({ has: page.locator('code', { hasText: key }) });
    // A number within its limits, which the browser holds to before the API does.
    const ttl = config.getByLabel('Value of gps.latest_cache_ttl_secs');
    await ttl.waitFor();
    expect(await config.getByRole('columnheader').allTextContents()).toEqual([
      'Key',
      'Value',
      'Description',
      'Changed',
    ]);

    expect(await attributes(ttl, ['type', 'min', 'max', 'step', 'required'])).toEqual([
      'number',
      '1',
      '86400',
      '1',
      '',
    ]);
    expect(await ttl.inputValue()).toBe('300');
    expect(await descriptionOf(ttl)).toBe('A whole number from 1 to 86,400.');
    expect(await row('gps.latest_cache_ttl_secs').getByRole('cell').nth(2).textContent()).toBe(
      'Seconds the latest GPS point (overall and per device) stays cached; every new point refreshes it',
    );
    await ttl.fill('100000');
    await config.getByRole('button', { name: 'Save: gps.latest_cache_ttl_secs' }).click();
    expect(
      await ttl.evaluate(
        (input) => (input as unknown as { validity: { rangeOverflow: boolean } }).validity.rangeOverflow,
      ),
    ).toBe(true);
    await ttl.fill('600');
    await config.getByRole('button', { name: 'Save: gps.latest_cache_ttl_secs' }).click();
    await page.getByText('gps.latest_cache_ttl_secs saved.').waitFor();
    expect((await api.get('/v1/system-config/gps.latest_cache_ttl_secs').expect(200)).body.data.value).toBe(600);

    // A number that may be empty for null ("keep for ever").
    const retention = config.getByLabel('Value of gps.retention_days');
    expect([await retention.inputValue(), await retention.getAttribute('required')]).toEqual(['', null]);
    expect(await descriptionOf(retention)).toBe('A whole number from 1 to 36,500, or empty for none.');
    await retention.fill('30');
    await config.getByRole('button', { name: 'Save: gps.retention_days' }).click();
    await expect
      .poll(async () => (await api.get('/v1/system-config/gps.retention_days').expect(200)).body.data.value)
      .toBe(30);
    await retention.fill('');
    await config.getByRole('button', { name: 'Save: gps.retention_days' }).click();
    await expect
      .poll(async () => (await api.get('/v1/system-config/gps.retention_days').expect(200)).body.data.value)
      .toBe(null);

    // A switch.
    const logging = config.getByRole('checkbox', { name: 'trips.default_gps_logging: On' });
    expect(await logging.isChecked()).toBe(false);
    await logging.check();
    await config.getByRole('button', { name: 'Save: trips.default_gps_logging' }).click();
    await expect
      .poll(async () => (await api.get('/v1/system-config/trips.default_gps_logging').expect(200)).body.data.value)
      .toBe(true);

    // An entry for client apps takes any JSON value: still JSON text.
    expect(await config.getByLabel('Value of tracking.units (JSON)').inputValue()).toBe('"metric"');
    expect(await config.getByLabel('Value of map.default_center (JSON)').inputValue()).toBe(
      '{"zoom":10,"latitude":54.32,"longitude":10.14}',
    );
    await looked(page, 'admin-settings-typed', config);
    expect(problems).toEqual([]);
    await context.close();
    await api.patch('/v1/system-config/gps.latest_cache_ttl_secs', { value: 300 }).expect(200);
    await api.patch('/v1/system-config/trips.default_gps_logging', { value: false }).expect(200);
  });

  it('names users in the activity log, with who acted for them, and links each to the Users page', async () => {
    const { t, admin } = setup!;
    const user = await createUser(t.app);
    await t.as(admin).post(`/v1/users/${user.id}/ban`, { reason: 'Spam', duration_seconds: 3600 }).expect(200);
    await t.as(admin).delete(`/v1/users/${user.id}/ban`).expect(200);
    const { context, page, problems } = await adminOn('audit');
    await page.getByLabel('User (id, username or email)').fill(user.username);
    await page.getByRole('button', { name: 'Apply filters' }).click();
    // (The unfiltered page shows first: wait until every row is the user's.)
    await expect
      .poll(async () => new Set(await page.locator('tbody tr td:nth-child(3)').allTextContents()))
      .toEqual(new Set([user.username, `${user.username} (by admin)`]));
    await looked(page, 'admin-audit-names', page.locator('tbody tr').first());
    await page.getByRole('link', { name: user.username, exact: true }).first().click();
    await page.waitForURL((url) => url.hash === `#/admin/users/${user.username}`);
    expect(await page.getByLabel('Search users').inputValue()).toBe(user.username);
    const users = page.getByRole('region', { name: 'Users', exact: true });
    await expect.poll(() => users.locator('tbody tr td:first-child').allTextContents()).toEqual([user.username]);
    expect(problems).toEqual([]);
    await context.close();
  });

  it("shows a role's permissions by area, in words with their codes; one is taken and one given", async () => {
    const { t } = setup!;
    const role = `Dispatch ${Date.now()}`;
    await createRoleWith(t.app, role, ['users:ban', 'gps:write_own', 'devices:delete', 'gps:read', 'devices:read']);
    const { context, page, problems } = await adminOn('roles');
    await page.getByRole('button', { name: role }).click();
    await page.getByRole('heading', { name: role }).waitFor();
    expect(await areasShown(page)).toEqual([
      ['Devices', ['Read devices:read', 'Delete devices:delete']],
      ['GPS points', ['Read gps:read', 'Create and change their own gps:write_own']],
      ['Users', ['Ban users:ban']],
    ]);
    await page.getByRole('button', { name: 'Take away: devices:delete' }).click();
    await expect
      .poll(() => areasShown(page))
      .toEqual([
        ['Devices', ['Read devices:read']],
        ['GPS points', ['Read gps:read', 'Create and change their own gps:write_own']],
        ['Users', ['Ban users:ban']],
      ]);
    // The permissions to give are grouped by area too.
    const choose = page.getByLabel('Permission to give');
    // Nothing is chosen at first ("Everything" leads the list).
    expect(await choose.locator('option:checked').textContent()).toBe('Choose a permission');
    expect(await choose.locator('optgroup[label="Trips"] option').allTextContents()).toEqual([
      'Everything (trips:*)',
      'Read (trips:read)',
      'Read their own (trips:read_own)',
      'Create and change (trips:write)',
      'Create and change their own (trips:write_own)',
      'Delete (trips:delete)',
      'Delete their own (trips:delete_own)',
    ]);
    await choose.selectOption({ label: 'Read (trips:read)' });
    await page.getByRole('button', { name: 'Give permission' }).click();
    await expect.poll(() => areasShown(page)).toContainEqual(['Trips', ['Read trips:read']]);
    await looked(page, 'admin-roles-areas', page.locator('section.permission-area').first());
    expect(problems).toEqual([]);
    await context.close();
  });

  it('speaks German in the dark on all four', async () => {
    const { t } = setup!;
    const role = `Leitstelle ${Date.now()}`;
    await createRoleWith(t.app, role, ['devices:read', 'gps:read_own']);
    const { context, page, problems } = await adminOn('users', { locale: 'de-DE', colorScheme: 'dark' });
    const form = page.getByRole('form', { name: 'Benutzer einladen' });
    await form.getByRole('button', { name: 'Einladung senden' }).waitFor();
    expect(await descriptionOf(form.getByLabel('Passwort (optional)'))).toBe(
      'Mindestens 8 Zeichen; teilen Sie es der Person mit. Bleibt es leer, wählt sie nach der Bestätigung selbst ' +
        'eines mit „Passwort vergessen?“ auf der Anmeldeseite.',
    );
    await looked(page, 'admin-users-invite-de', form);

    await page.getByRole('navigation', { name: 'Verwaltung' }).getByRole('link', { name: 'Einstellungen' }).click();
    const ttl = page.getByLabel('Wert von gps.latest_cache_ttl_secs');
    expect(await descriptionOf(ttl)).toBe('Eine ganze Zahl von 1 bis 86.400.');
    await page.getByRole('checkbox', { name: 'tracking.self_service: An' }).waitFor();
    await looked(page, 'admin-settings-typed-de', ttl);

    await page.getByRole('link', { name: 'Aktivitätsprotokoll' }).click();
    await page.locator('tbody tr td:nth-child(3) a').first().waitFor();
    await looked(page, 'admin-audit-names-de', page.locator('tbody tr td:nth-child(3) a').first());

    await page.getByRole('link', { name: 'Rollen und Berechtigungen' }).click();
    await page.getByRole('button', { name: role }).click();
    await expect
      .poll(() => areasShown(page))
      .toEqual([
        ['Geräte', ['Lesen devices:read']],
        ['GPS-Punkte', ['Eigene lesen gps:read_own']],
      ]);
    await looked(page, 'admin-roles-areas-de', page.locator('section.permission-area').first());
    expect(problems).toEqual([]);
    await context.close();
  });
});
