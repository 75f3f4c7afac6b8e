import { createServer, request, type Server } from 'node:http';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../../../test/chromium.js';
import { type FakeSmtp, type ReceivedMail } from '../../../test/fakes/smtp.js';
import { buildMailingTestApp, createUser, freePort, type TestApp } from '../../../test/helpers.js';

let t: TestApp;
let smtp: FakeSmtp;
let browser: Browser;
let proxy: Server;

beforeAll(async () => {
  const [appPort, proxyPort] = [await freePort(), await freePort()];
  // Behind a reverse proxy that serves the service under /waygate: the forms must post under it.
  ({ t, smtp } = await buildMailingTestApp({ config: { publicUrl: `http://127.0.0.1:${proxyPort}/waygate` } }));
  await t.app.listen({ host: '127.0.0.1', port: appPort });
  proxy = createServer((incoming, outgoing) => {
    const path = incoming.url!.startsWith('/waygate/')
      ? incoming.url!.slice('/waygate'.length)
      : '/not-under-the-prefix';
    const upstream = request(
      { host: '127.0.0.1', port: appPort, path, method: incoming.method, headers: incoming.headers },
      (answer) => {
        outgoing.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(outgoing);
      },
    );
    incoming.pipe(upstream);
  });
  await new Promise<void>((resolve) => proxy.listen(proxyPort, '127.0.0.1', resolve));
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  proxy?.close();
  await t.close();
});

/** The link in a mail's plain-text part, as a person would click it. */
const linkIn = (mail: ReceivedMail) => /https?:\/\/\S+\?token=\S+/.exec(mail.text)![0];

/** A page without JavaScript: the forms must work with plain HTML. */
async function openLink(link: string): Promise<Page> {
  const context = await browser.newContext({ javaScriptEnabled: false });
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  await page.goto(link);
  return page;
}
const heading = (page: Page) => page.getByRole('heading', { level: 1 }).textContent();
const login = (identifier: string, password: string) => t.as(null).post('/v1/auth/login', { identifier, password });

describe('the pages mailed links open, in Chromium', () => {
  it('registration: the link opens a page whose button creates the account; the link then works no more', async () => {
    const email = `page${Date.now()}@example.org`;
    await t
      .as(null)
      .post('/v1/auth/register', { email, username: `page${Date.now()}`, password: 'page password 1' })
      .expect(200);
    const link = linkIn(await smtp.waitFor(email));
    expect(link).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/waygate\/verify-email\?token=/);

    const page = await openLink(link);
    expect(await heading(page)).toBe('Confirm your email address');
    expect(await page.getAttribute('html', 'lang')).toBe('en');
    // Opening the link alone confirms nothing (a mail scanner may open it).
    expect((await login(email, 'page password 1')).status).toBe(401);
    await page.getByRole('button', { name: 'Confirm email address' }).click();
    expect(await heading(page)).toBe('Email address confirmed');
    expect(await page.getByRole('alert').textContent()).toBe(
      'Email confirmed; your account is ready and you can sign in',
    );
    expect((await login(email, 'page password 1')).status).toBe(200);

    const again = await openLink(link);
    const [response] = await Promise.all([
      again.waitForResponse((r) => r.request().method() === 'POST'),
      again.getByRole('button', { name: 'Confirm email address' }).click(),
    ]);
    expect(response.status()).toBe(400);
    expect(await heading(again)).toBe('This link cannot be used');
    expect(await again.getByRole('alert').textContent()).toBe('Invalid or expired token');
  });

  it('password reset: the form refuses two different passwords, then sets the new one and ends every session', async () => {
    const user = await createUser(t.app);
    const email = `${user.username}@example.org`;
    await t.as(null).post('/v1/auth/reset-password', { email }).expect(200);
    const page = await openLink(linkIn(await smtp.waitFor(email, (mail) => /reset/i.test(mail.subject))));
    expect(await heading(page)).toBe('Choose a new password');

    await page.getByLabel('New password', { exact: true }).fill('a new password 1');
    await page.getByLabel('New password again').fill('a different one 1');
    await page.getByRole('button', { name: 'Set new password' }).click();
    expect(await page.getByRole('alert').textContent()).toBe('The two passwords differ; type the same one twice.');
    expect((await login(user.username, user.password)).status).toBe(200);

    await page.getByLabel('New password', { exact: true }).fill('short');
    await page.getByLabel('New password again').fill('short');
    // (The browser would refuse a password under minlength itself; the server's rule is what is tested.)
    await page.$eval('form', (form) => form.setAttribute('novalidate', ''));
    await page.getByRole('button', { name: 'Set new password' }).click();
    expect(await page.getByRole('alert').textContent()).toBe('new_password must be at least 8 characters');

    await page.getByLabel('New password', { exact: true }).fill('a new password 1');
    await page.getByLabel('New password again').fill('a new password 1');
    await page.getByRole('button', { name: 'Set new password' }).click();
    expect(await heading(page)).toBe('Password changed');
    expect(await page.getByRole('alert').textContent()).toBe('Password updated; please sign in with the new password');
    expect((await login(user.username, user.password)).status).toBe(401);
    expect((await login(user.username, 'a new password 1')).status).toBe(200);
    expect((await t.as(user.token).get('/v1/users/me')).status).toBe(401);
  });

  it('email change: the link sent to the new address confirms it', async () => {
    const user = await createUser(t.app);
    const newEmail = `moved${Date.now()}@example.org`;
    await t.as(user.token).post(`/v1/users/${user.id}/email/request-change`, { email: newEmail }).expect(200);
    const page = await openLink(linkIn(await smtp.waitFor(newEmail)));
    await page.getByRole('button', { name: 'Confirm email address' }).click();
    expect(await heading(page)).toBe('Email address confirmed');
    expect(await page.getByRole('alert').textContent()).toBe('Your new email address is confirmed');
    expect((await login(newEmail, user.password)).status).toBe(200);
    expect((await t.as(user.token).get(`/v1/users/${user.id}/email/pending`)).body).toEqual({
      pending: false,
      new_email: null,
      expires_at: null,
    });
  });
});
