import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../../../test/chromium.js';
import { buildTestApp, type TestApp } from '../../../test/helpers.js';

let t: TestApp;
let base: string;
let browser: Browser;

beforeAll(async () => {
  t = await buildTestApp();
  base = await t.app.listen({ host: '127.0.0.1', port: 0 });
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await t.close();
});

describe('GraphiQL in Chromium, offline', () => {
  it('loads from this origin alone, shows the schema in its docs pane and runs a query', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    page.setDefaultTimeout(15_000);
    // Every other origin is unreachable, as on an air-gapped install; what was asked of it is recorded.
    const elsewhere: string[] = [];
    await context.route((url) => url.origin !== base, (route) => {
      elsewhere.push(route.request().url());
      return route.abort('internetdisconnected');
    });
    const problems: string[] = [];
    page.on('console', (message) => { if (message.type() === 'error') problems.push(message.text()); });
    page.on('pageerror', (error) => problems.push(error.message));
    page.on('response', (response) => { if (response.status() >= 400) problems.push(`${response.status()} ${response.url()}`); });

    await page.goto(`${base}/v1/graphiql`);
    await page.getByRole('button', { name: /show documentation explorer/i }).click();
    await page.getByText('Root Types').waitFor();
    await page.getByRole('link', { name: 'Query', exact: true }).click();
    await page.getByText('latestPositions').first().waitFor();

    // The query editor is CodeMirror: its own API, then the toolbar's run button.
    await page.locator('.graphiql-query-editor .CodeMirror').first().evaluate((element) => {
      (element as unknown as { CodeMirror: { setValue(text: string): void } }).CodeMirror.setValue('{ me { isSuperAdmin } }');
    });
    await page.getByRole('button', { name: /execute query/i }).click();
    // Anonymous (no token in the Headers tab): the resolver of `me` ran and refused.
    await expect.poll(() => page.locator('.graphiql-response').innerText()).toContain('"code": "auth.unauthorized"');
    expect(await page.locator('.graphiql-response').innerText()).toMatch(/"path": \[\s*"me"\s*\]/);

    expect(elsewhere).toEqual([]);
    expect(problems).toEqual([]);
    await context.close();
  }, 60_000);
});
