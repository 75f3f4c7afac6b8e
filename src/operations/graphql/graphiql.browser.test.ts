import { describe, expect, it } from 'vitest';
import { appInChromium, pageProblems } from '../../../test/chromium.js';

const session = appInChromium();

describe('GraphiQL in Chromium, offline', () => {
  it('loads from this origin alone, shows the schema in its docs pane and runs a query', async () => {
    const { base, browser } = session;
    const context = await browser.newContext();
    const page = await context.newPage();
    page.setDefaultTimeout(15_000);
    // Every other origin is unreachable, as on an air-gapped install; what was asked of it is recorded.
    const elsewhere: string[] = [];
    await context.route(
      (url) => url.origin !== base,
      (route) => {
        elsewhere.push(route.request().url());
        return route.abort('internetdisconnected');
      },
    );
    const problems = pageProblems(page);

    await page.goto(`${base}/v1/graphiql`);
    await page.getByRole('button', { name: /show documentation explorer/i }).click();
    await page.getByText('Root Types').waitFor();
    await page.getByRole('link', { name: 'Query', exact: true }).click();
    await page.getByText('latestPositions').first().waitFor();

    // The query editor is CodeMirror: its own API, then the toolbar's run button.
    await page
      .locator('.graphiql-query-editor .CodeMirror')
      .first()
      .evaluate((element) => {
        (element as unknown as { CodeMirror: { setValue(text: string): void } }).CodeMirror.setValue(
          '{ me { isSuperAdmin } }',
        );
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
