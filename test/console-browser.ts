import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Browser, BrowserContext, BrowserContextOptions, Page } from 'playwright-core';
import { launchChromium } from './chromium.js';
import { startFakeTileServer } from './fakes/tiles.js';
import type { Config } from '../src/config.js';
import { buildTestApp, TEST_ADMIN, testConfig, type TestApp } from './helpers.js';

/** Helpers of the console's Chromium tests: screenshots at phone and desktop width (gitignored), axe, sign-in. */
export const SHOTS = 'test-results/console';
export const VIEWPORTS = { phone: { width: 375, height: 740 }, desktop: { width: 1280, height: 800 } };
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** A page whose CSP violations and script errors are collected (a strict CSP breaks silently otherwise). */
export async function openConsole(context: BrowserContext, base: string): Promise<{ page: Page; problems: string[] }> {
  const page = await context.newPage();
  const problems: string[] = [];
  // (Chromium logs every 4xx answer as "Failed to load resource"; the API's refusals are expected here.)
  page.on('console', (message) => {
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
      problems.push(message.text());
  });
  page.on('pageerror', (err) => problems.push(err.message));
  await page.goto(`${base}/`);
  return { page, problems };
}

export async function signIn(page: Page, identifier: string, password: string) {
  await page.getByLabel('Username or email').fill(identifier);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/** axe-core in the page: serious and critical violations, by rule and the elements concerned. */
export async function axeViolations(page: Page) {
  await page.evaluate(AXE);
  const results = await page.evaluate(() =>
    (
      globalThis as unknown as {
        axe: {
          run: (
            options: unknown,
          ) => Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }>;
        };
      }
    ).axe.run({ resultTypes: ['violations'] }),
  );
  return results.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

export async function screenshot(page: Page, name: string) {
  for (const [size, viewport] of Object.entries(VIEWPORTS)) {
    await page.setViewportSize(viewport);
    await page.waitForTimeout(150);
    await page.screenshot({ path: `${SHOTS}/${name}-${size}.png` });
  }
}

/** A new browser context (desktop unless `options` say otherwise) signed in as this user, on the page it lands on. */
export async function signedInContext(
  setup: ConsoleInChromium,
  user: { username: string; password: string },
  options: BrowserContextOptions = {},
): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
  const context = await setup.browser.newContext({ viewport: VIEWPORTS.desktop, ...options });
  const { page, problems } = await openConsole(context, setup.base);
  await signIn(page, user.username, user.password);
  await page.locator('#sign-out').waitFor(); // (by id: its label is in the user's language)
  return { context, page, problems };
}

/** What a console browser test file shares: a local tile server, the app serving the console with it, Chromium, the admin's session. */
export interface ConsoleInChromium {
  tiles: Awaited<ReturnType<typeof startFakeTileServer>>;
  t: TestApp;
  base: string;
  browser: Browser;
  admin: string;
}

/** `config` changes the app's settings (bot protection, say); the admin's sign-in passes the fake bot check. */
export async function startConsoleInChromium(config: Partial<Config> = {}): Promise<ConsoleInChromium> {
  const tiles = await startFakeTileServer();
  const t = await buildTestApp({
    config: {
      console: { ...testConfig().console, tileUrl: tiles.template, tileAttribution: '© Test tiles' },
      ...config,
    },
  });
  const base = await t.app.listen({ host: '127.0.0.1', port: 0 });
  const browser = await launchChromium();
  const signedIn = await t.app.inject({
    method: 'POST',
    url: '/v1/auth/login',
    payload: { identifier: 'admin', password: TEST_ADMIN.password, turnstile_token: 'human' },
  });
  if (signedIn.statusCode !== 200) throw new Error(`admin sign-in failed: ${signedIn.body}`);
  const admin = signedIn.json().session_token as string;
  mkdirSync(SHOTS, { recursive: true });
  return { tiles, t, base, browser, admin };
}

/** Closes what `startConsoleInChromium` opened, as far as it got. (Closing Chromium can take a while on a loaded machine: give the hook 180 s.) */
export async function stopConsoleInChromium(setup: Partial<ConsoleInChromium> | undefined) {
  await setup?.browser?.close();
  await setup?.t?.close();
  await setup?.tiles?.close();
}
