import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tokenFromMail, type FakeSmtp } from '../../../test/fakes/smtp.js';
import { buildMailingTestApp, createUser, type TestApp } from '../../../test/helpers.js';

let t: TestApp;
let smtp: FakeSmtp;

beforeAll(async () => {
  ({ t, smtp } = await buildMailingTestApp({
    config: { publicUrl: 'https://api.waygate.test', frontendUrl: 'https://app.waygate.test' },
  }));
});
afterAll(() => t.close());

describe('mailed links with FRONTEND_URL', () => {
  it('lead to the front end, and verify-email sends the user on there too', async () => {
    const email = `front${Date.now()}@example.org`;
    await t
      .as(null)
      .post('/v1/auth/register', { email, username: `front${Date.now()}`, password: 'front password 1' })
      .expect(200);
    const registration = await smtp.waitFor(email);
    expect(registration.text).toMatch(/https:\/\/app\.waygate\.test\/verify-email\?token=\S+/);
    const verified = await t.as(null).post('/v1/auth/verify-email', { token: tokenFromMail(registration) });
    expect(verified.body).toMatchObject({
      verification_type: 'registration',
      redirect_url: 'https://app.waygate.test/login',
    });

    const user = await createUser(t.app);
    await t
      .as(null)
      .post('/v1/auth/reset-password', { email: `${user.username}@example.org` })
      .expect(200);
    expect((await smtp.waitFor(`${user.username}@example.org`)).text).toMatch(
      /https:\/\/app\.waygate\.test\/reset-password\?token=\S+/,
    );
  });
});

describe("the service's own link pages", () => {
  it.each(['/verify-email', '/reset-password'])(
    '%s is a plain HTML page under a strict CSP, never cached',
    async (path) => {
      const response = await t.app.inject({ url: `${path}?token=abc` });
      expect(response.statusCode).toBe(200);
      expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(response.headers['content-security-policy']).toMatch(
        /^default-src 'none'; style-src 'unsafe-inline';.* form-action 'self'/,
      );
      expect(response.headers['cache-control']).toBe('no-store');
      expect(response.body).toContain('<html lang="en">');
      expect(response.body).toContain('<input type="hidden" name="token" value="abc">');
      expect(response.body).not.toContain('<script');
    },
  );

  it.each(['/verify-email', '/reset-password'])(
    '%s without a token says the link is incomplete (400)',
    async (path) => {
      const response = await t.app.inject({ url: path });
      expect(response.statusCode).toBe(400);
      expect(response.body).toContain('<h1>This link is incomplete</h1>');
    },
  );

  it('escapes the token it shows', async () => {
    const response = await t.app.inject({
      url: `/verify-email?token=${encodeURIComponent('"><script>alert(1)</script>')}`,
    });
    expect(response.body).toContain('value="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"');
  });

  it('a used or unknown token posted by the form gets a page saying so (400)', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/verify-email',
      payload: 'token=unknown',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(response.statusCode).toBe(400);
    expect(response.body).toContain('<h1>This link cannot be used</h1>');
    expect(response.body).toContain('Invalid or expired token');
  });
});
