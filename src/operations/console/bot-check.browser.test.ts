import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeBotVerifier, type FakeBotVerifier } from '../../../test/fakes/bot-verifier.js';
import { fakeTurnstileWidget } from '../../../test/fakes/turnstile-widget.js';
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
import { TEST_ADMIN } from '../../../test/helpers.js';

/** The console's sign-in with bot protection on: Turnstile's widget (a local stand-in) and its token. */
let verifier: FakeBotVerifier | undefined;
let setup: ConsoleInChromium | undefined;

beforeAll(async () => {
  verifier = await startFakeBotVerifier();
  setup = await startConsoleInChromium({
    botProtection: { secret: 'bot-secret', siteKey: '0x4AAAA-console-key', verifyUrl: verifier.url },
  });
});
afterAll(async () => {
  await stopConsoleInChromium(setup);
  await verifier?.close();
}, 180_000);

describe('console sign-in with bot protection', { timeout: 120_000 }, () => {
  it('shows the bot check, is refused without its token, and signs in with it', async () => {
    const { base, browser } = setup!;
    const response = await fetch(`${base}/console/`);
    const csp = response.headers.get('content-security-policy')!;
    expect(csp).toContain("script-src 'self' https://challenges.cloudflare.com;");
    expect(csp).toContain('frame-src https://challenges.cloudflare.com;');

    const context = await browser.newContext({ viewport: VIEWPORTS.desktop });
    await fakeTurnstileWidget(context);
    const { page, problems } = await openConsole(context, base);
    const challenge = page.frameLocator('.bot-check iframe').getByRole('button', { name: 'Verify you are human' });
    await challenge.waitFor();
    await signIn(page, 'admin', TEST_ADMIN.password);
    await page.getByRole('alert').getByText('Answer the check “Verify you are human” first.').waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'sign-in-bot-check');

    // A token is good for one check: the refused attempt reset the widget, which is answered now.
    await challenge.click();
    await signIn(page, 'admin', TEST_ADMIN.password);
    await page.getByRole('button', { name: 'Sign out', exact: true }).waitFor();
    expect(verifier!.requests.at(-1)).toMatchObject({ secret: 'bot-secret', response: 'human' });
    expect(problems).toEqual([]);
    await context.close();
  });

  it('asks for the check in German, in the dark', async () => {
    const { base, browser } = setup!;
    const context = await browser.newContext({ viewport: VIEWPORTS.desktop, locale: 'de-DE', colorScheme: 'dark' });
    await fakeTurnstileWidget(context);
    const { page, problems } = await openConsole(context, base);
    await page.frameLocator('.bot-check iframe').getByRole('button', { name: 'Verify you are human' }).waitFor();
    await page.getByLabel('Benutzername oder E-Mail').fill('admin');
    await page.getByLabel('Passwort').fill(TEST_ADMIN.password);
    await page.getByRole('button', { name: 'Anmelden', exact: true }).click();
    await page
      .getByRole('alert')
      .getByText('Bitte zuerst die Prüfung „Bestätigen Sie, dass Sie ein Mensch sind“ beantworten.')
      .waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'sign-in-bot-check-de-dark');
    expect(problems).toEqual([]);
    await context.close();
  });
});
