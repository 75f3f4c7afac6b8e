import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as client from 'openid-client';
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../../../test/chromium.js';
import {
  buildTestApp,
  createApiKey,
  createUser,
  freePort,
  TEST_ADMIN,
  login,
  type TestApp,
} from '../../../test/helpers.js';

/**
 * OAUTH_LOGIN_URL: a front end on its own origin signs the person in through the API and hands the
 * session over to the authorization. The front end here is a page that does exactly what docs/oauth.md
 * ("Sign-in on your own front end") tells one to do.
 */
const frontEndPage = (api: string) => `<!doctype html><html lang="en"><title>Front end</title>
<form id="f"><label>Username <input name="identifier"></label><label>Password <input name="password" type="password"></label><button>Sign in</button></form>
<p id="redirect"></p>
<script>
const interaction = new URLSearchParams(location.search).get('interaction');
document.getElementById('f').addEventListener('submit', async (event) => {
  event.preventDefault();
  const form = new FormData(event.target);
  const json = { 'content-type': 'application/json' };
  const signedIn = await (await fetch('${api}/v1/auth/login', { method: 'POST', headers: json, body: JSON.stringify(Object.fromEntries(form)) })).json();
  const handoff = await fetch('${api}/v1/oauth/interaction/' + encodeURIComponent(interaction) + '/handoff', { method: 'POST', headers: { authorization: 'Bearer ' + signedIn.session_token } });
  const { redirect_to } = await handoff.json();
  document.getElementById('redirect').textContent = redirect_to;
  if (!location.hash.includes('stay')) location.assign(redirect_to);
});
</script></html>`;

let t: TestApp;
let base: string;
let browser: Browser;
let frontEnd: Server;
let frontEndUrl: string;
let relyingParty: Server;
let callbackUrl: string;
/** What the relying party's callback received, by state. */
const received = new Map<string, URL>();

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  frontEnd = createServer((_request, response) =>
    response.writeHead(200, { 'content-type': 'text/html' }).end(frontEndPage(base)),
  );
  frontEndUrl = `${await listen(frontEnd)}/signin`;
  relyingParty = createServer((request, response) => {
    const url = new URL(request.url!, callbackUrl);
    received.set(url.searchParams.get('state') ?? '', url);
    response.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>Relying party</title>');
  });
  callbackUrl = `${await listen(relyingParty)}/cb`;
  t = await buildTestApp({
    config: { publicUrl: base, oauthLoginUrl: frontEndUrl, corsOrigins: [new URL(frontEndUrl).origin] },
  });
  await t.app.listen({ host: '127.0.0.1', port });
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  frontEnd?.close();
  relyingParty?.close();
  await t.close();
});

/** A third-party public client and an authorization URL for it. */
async function authorization() {
  const developer = await createUser(t.app, ['role_user', 'role_developer']);
  const registered = await t
    .as(developer.token)
    .post('/v1/oauth/clients', { name: 'Crew Planner', redirect_uris: [callbackUrl], client_type: 'public' })
    .expect(201);
  const rp = await client.discovery(new URL(`${base}/v1/oauth`), registered.body.client.id, undefined, client.None(), {
    execute: [client.allowInsecureRequests],
  });
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const url = client.buildAuthorizationUrl(rp, {
    redirect_uri: callbackUrl,
    scope: 'openid profile',
    state,
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  });
  return { rp, verifier, state, url };
}

async function signInOnFrontEnd(
  context: BrowserContext,
  url: URL,
  user: { username: string; password: string },
  stay = false,
) {
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  await page.goto(url.href);
  await page.waitForURL(`${frontEndUrl}?**`);
  const landed = new URL(page.url());
  expect(landed.searchParams.get('client_name')).toBe('Crew Planner');
  // (Strings: this file is compiled without the DOM's types.)
  if (stay) await page.evaluate("location.hash = 'stay'");
  await page.getByLabel('Username').fill(user.username);
  await page.getByLabel('Password').fill(user.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  return { page, uid: landed.searchParams.get('interaction')! };
}

describe('sign-in on a front end (OAUTH_LOGIN_URL)', () => {
  it('sends the browser to the front end, takes its session, asks consent, and the relying party gets its code', async () => {
    const { rp, verifier, state, url } = await authorization();
    const user = await createUser(t.app);
    const context = await browser.newContext();
    const { page } = await signInOnFrontEnd(context, url, user);
    await page.waitForSelector('text=wants access to your account');
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.waitForURL(`${callbackUrl}?**`);
    await context.close();

    const tokens = await client.authorizationCodeGrant(rp, received.get(state)!, {
      pkceCodeVerifier: verifier,
      expectedState: state,
    });
    expect(tokens.claims()).toMatchObject({ sub: user.id });
  });

  it('a handoff ticket works once, and only in the browser that started the authorization', async () => {
    const { url } = await authorization();
    const user = await createUser(t.app);
    const starter = await browser.newContext();
    const { page } = await signInOnFrontEnd(starter, url, user, true);
    await page.waitForFunction("document.getElementById('redirect').textContent");
    const redirectTo = (await page.textContent('#redirect'))!;

    const other = await browser.newContext();
    const elsewhere = await other.newPage();
    const refused = await elsewhere.goto(redirectTo);
    expect(refused?.status()).toBe(400);
    await other.close();
    // Spent by that attempt: not even the right browser gets in with it now.
    const spent = await page.goto(redirectTo);
    expect(spent?.status()).toBe(400);
    await starter.close();
  });

  it('wants a session (403 for an API key) and an authorization waiting for a sign-in (404)', async () => {
    const admin = await login(t.app, 'admin', TEST_ADMIN.password);
    const key = await createApiKey(t.app, admin, { name: 'handoff', scopes: ['gps:read'] });
    const withKey = await t.as(key.key).post('/v1/oauth/interaction/some-uid/handoff').expect(403);
    expect(withKey.body.code).toBe('oauth.handoff_needs_session');
    const unknown = await t.as(admin).post('/v1/oauth/interaction/some-uid/handoff').expect(404);
    expect(unknown.body.code).toBe('oauth.interaction_not_found');
    expect((await t.as(null).post('/v1/oauth/interaction/some-uid/handoff')).status).toBe(401);
  });
});
