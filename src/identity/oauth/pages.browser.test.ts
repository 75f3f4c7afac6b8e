import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as client from 'openid-client';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../../../test/chromium.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createUser, freePort, type TestApp } from '../../../test/helpers.js';

let t: TestApp;
let base: string;
let browser: Browser;
let relyingParty: Server;
let callbackUrl: string;
/** What the relying party's callback received, by state. */
const received = new Map<string, URL>();

beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  t = await buildTestApp({ config: { publicUrl: base } });
  await t.app.listen({ host: '127.0.0.1', port });
  relyingParty = createServer((request, response) => {
    const url = new URL(request.url!, callbackUrl);
    received.set(url.searchParams.get('state') ?? '', url);
    response
      .writeHead(200, { 'content-type': 'text/html' })
      .end('<!doctype html><title>Relying party</title><h1>Signed in</h1>');
  });
  await new Promise<void>((resolve) => relyingParty.listen(0, '127.0.0.1', resolve));
  callbackUrl = `http://127.0.0.1:${(relyingParty.address() as AddressInfo).port}/cb`;
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  relyingParty?.close();
  await t.close();
});

describe('sign-in and consent pages in Chromium', () => {
  it('a user signs in, consents, and the relying party receives a code it can redeem', async () => {
    const developer = await createUser(t.app, ['role_user', 'role_developer']);
    const registered = await t
      .as(developer.token)
      .post('/v1/oauth/clients', {
        name: 'Crew Planner',
        homepage_url: 'https://crew.example.org',
        redirect_uris: [callbackUrl],
        client_type: 'public',
      })
      .expect(201);
    const clientId = registered.body.client.id;
    // Discovered as an OAuth 2.0 client does (RFC 8414, the path-inserted address), the issuer checked.
    const rp = await client.discovery(new URL(`${base}/v1/oauth`), clientId, undefined, client.None(), {
      algorithm: 'oauth2',
      execute: [client.allowInsecureRequests],
    });
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const authorizeUrl = client.buildAuthorizationUrl(rp, {
      redirect_uri: callbackUrl,
      scope: 'openid profile email',
      state,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    const user = await createUser(t.app);

    const context = await browser.newContext();
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    await page.goto(authorizeUrl.href);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe(
      'Sign in to continue to Crew Planner',
    );
    expect(await page.getAttribute('html', 'lang')).toBe('en');

    // A wrong password keeps the user on the page, told why.
    await page.getByLabel('Username or email').fill(user.username);
    await page.getByLabel('Password').fill('not-the-password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toMatch(/invalid/i);

    await page.getByLabel('Password').fill(user.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForSelector('text=wants access to your account');
    expect(await page.locator('li').allTextContents()).toEqual([
      'Know who you are',
      'See your username, language and picture',
      'See your email address',
    ]);
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.waitForURL(`${callbackUrl}?**`);
    await context.close();

    const callback = received.get(state)!;
    expect(callback.searchParams.get('code')).toEqual(expect.any(String));
    const tokens = await client.authorizationCodeGrant(rp, callback, {
      pkceCodeVerifier: verifier,
      expectedState: state,
    });
    expect(tokens.claims()).toMatchObject({ sub: user.id, aud: clientId });
    expect((await t.as(tokens.access_token).get('/v1/users/me').expect(200)).body.data.id).toBe(user.id);
  });
});
