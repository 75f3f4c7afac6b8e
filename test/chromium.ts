import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { buildTestApp, type TestApp, type TestAppOptions } from './helpers.js';

/** Debian's Chromium, which .ci/run installs; flags for a machine without a network beyond loopback. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Headless Chromium for browser tests (never a browser a test tool downloads). */
export const launchChromium = (): Promise<Browser> =>
  chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });

/**
 * One test app listening on a loopback port and one Chromium for every test of the file, closed after
 * them. The fields are there once the file's `beforeAll` has run: read them inside a test.
 */
export function appInChromium(options: TestAppOptions = {}): {
  readonly t: TestApp;
  readonly base: string;
  readonly browser: Browser;
} {
  const state = {} as { t: TestApp; base: string; browser: Browser };
  beforeAll(async () => {
    state.t = await buildTestApp(options);
    state.base = await state.t.app.listen({ host: '127.0.0.1', port: 0 });
    state.browser = await launchChromium();
  });
  // (Closing Chromium can take a while on a loaded machine.)
  afterAll(async () => {
    await state.browser?.close();
    await state.t?.close();
  }, 180_000);
  return state;
}

/** What went wrong in a page while a test drove it: console errors, uncaught exceptions and 4xx/5xx answers. */
export function pageProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(message.text());
  });
  page.on('pageerror', (error) => problems.push(error.message));
  page.on('response', (response) => {
    if (response.status() >= 400) problems.push(`${response.status()} ${response.url()}`);
  });
  return problems;
}
