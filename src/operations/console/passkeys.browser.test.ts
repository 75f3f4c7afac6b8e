import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { launchChromium } from '../../../test/chromium.js';
import { buildTestApp, createUser, freePort, type TestApp } from '../../../test/helpers.js';
import { RECENT_SIGN_IN_MS } from '../../identity/sign-in/index.js';

/**
 * The console's passkey page and sign-in, end to end in Chromium with its virtual authenticator (the
 * DevTools protocol's WebAuthn domain): register a passkey, sign out, sign in with it without a username.
 * WebAuthn needs a domain as relying party, not an IP address: the service is addressed as localhost.
 */
let t: TestApp;
let base: string;
let browser: Browser;

beforeAll(async () => {
  const port = await freePort();
  base = `http://localhost:${port}`;
  t = await buildTestApp({ config: { publicUrl: base } });
  await t.app.listen({ host: '127.0.0.1', port });
  browser = await launchChromium();
});
// (Closing Chromium can take a while on a loaded machine.)
afterAll(async () => {
  await browser?.close();
  await t?.close();
}, 180_000);

it('registers a passkey on the passkeys page, then signs in with it without a username (button and autofill)', async () => {
  const user = await createUser(t.app);
  const context = await browser.newContext();
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (err) => problems.push(err.message));
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });

  // Chromium's virtual authenticator answers a conditional (autofill) request at once, with nobody choosing;
  // the button's way is taken first (autofill hidden), the autofill's at the end (`?autofill`).
  await page.addInitScript({
    content:
      "if (!location.search.includes('autofill')) PublicKeyCredential.isConditionalMediationAvailable = async () => false;",
  });
  await page.goto(`${base}/`);
  await page.getByLabel('Username or email').fill(user.username);
  await page.getByLabel('Password').fill(user.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('link', { name: 'Passkeys' }).click();
  await expect.poll(() => page.getByText('No passkeys yet.').isVisible()).toBe(true);
  await page.getByLabel('Name of the new passkey').fill('Laptop');
  await page.getByRole('button', { name: 'Add a passkey' }).click();
  await page.getByRole('button', { name: 'Remove: Laptop' }).waitFor();
  const [stored] = (
    await t.app.inject({ url: '/v1/users/me/passkeys', headers: { authorization: `Bearer ${user.token}` } })
  ).json().data;
  expect(stored).toMatchObject({ name: 'Laptop', user_verified: true });

  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('button', { name: 'Use a passkey' }).click();
  await page.getByRole('link', { name: 'Passkeys' }).click();
  await page.getByText(/last used/).waitFor();
  const login = await t.database.db
    .selectFrom('audit_events')
    .select('metadata')
    .where('user_id', '=', user.id)
    .where('event_type', '=', 'login')
    .orderBy('created_at', 'desc')
    .executeTakeFirstOrThrow();
  expect(login.metadata).toMatchObject({ provider: 'passkey' });
  expect(problems).toEqual([]);

  // The sign-in page offers the passkey in the username field's autofill (conditional UI), signing in when it is taken.
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.goto(`${base}/console/?autofill`);
  await page.getByRole('link', { name: 'Passkeys' }).waitFor();
  await context.close();
});

it('asks a session signed in more than 15 minutes ago for its password before a passkey, and the password change can remove them all', async () => {
  const user = await createUser(t.app);
  const context = await browser.newContext();
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (err) => problems.push(err.message));
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  await page.addInitScript({ content: 'PublicKeyCredential.isConditionalMediationAvailable = async () => false;' });
  await page.goto(`${base}/`);
  await page.getByLabel('Username or email').fill(user.username);
  await page.getByLabel('Password').fill(user.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('link', { name: 'Passkeys' }).click();
  await expect.poll(() => page.getByText('No passkeys yet.').isVisible()).toBe(true);

  t.clock.advance(RECENT_SIGN_IN_MS + 1000);
  await page.getByLabel('Name of the new passkey').fill('Phone');
  await page.getByRole('button', { name: 'Add a passkey' }).click();
  await page.getByText(/confirm it is you: enter your current password/).waitFor();
  await page.getByLabel('Current password').fill(user.password);
  await page.getByRole('button', { name: 'Add a passkey' }).click();
  await page.getByRole('button', { name: 'Remove: Phone' }).waitFor();

  await page.getByRole('link', { name: 'Account', exact: true }).click();
  // (The key form's password, asked only when needed, has the same label: the one of the password section.)
  await page.locator('input[name="current-password"]').fill(user.password);
  await page.getByLabel('New password (at least 8 characters)').fill('a brand new password');
  await page.getByLabel('New password again').fill('a brand new password');
  await page.getByLabel('Also remove all passkeys and API keys').check();
  await page.getByRole('button', { name: 'Change password' }).click();
  await page.getByText('Every passkey and API key of your account was removed.', { exact: false }).waitFor();
  expect(await t.database.db.selectFrom('passkeys').select('id').where('user_id', '=', user.id).execute()).toEqual([]);
  expect(problems).toEqual([]);
  await context.close();
});
