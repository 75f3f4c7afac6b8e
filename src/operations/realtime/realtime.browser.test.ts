import { describe, expect, it } from 'vitest';
import { appInChromium } from '../../../test/chromium.js';
import { bearer, createUser, login, TEST_ADMIN } from '../../../test/helpers.js';

const session = appInChromium();

/** Runs in the page: opens the socket with the ticket as subprotocol, subscribes to gps, collects what arrives. */
function openInPage({ url, ticket }: { url: string; ticket: string }) {
  return new Promise<string>((resolve) => {
    const socket = new WebSocket(url, ['service-ticket', ticket]);
    const received: unknown[] = [];
    (globalThis as unknown as { received: unknown[] }).received = received;
    socket.onmessage = (event) => {
      const message = JSON.parse(event.data as string) as { type: string };
      received.push(message);
      if (message.type === 'Welcome') socket.send(JSON.stringify({ type: 'Subscribe', channel: 'gps' }));
      if (message.type === 'Subscribed') resolve(`open:${socket.protocol}`);
    };
    socket.onclose = (event) => resolve(`closed:${event.code}`);
  });
}

describe('WebSocket in Chromium', () => {
  it('a page opens the socket with a ticket, receives a point posted over REST, and cannot reuse the ticket', async () => {
    const { t, base, browser } = session;
    const user = await createUser(t.app, ['role_user', 'role_api_read_only']);
    const { ticket } = (
      await t.app.inject({ method: 'POST', url: '/v1/ws/ticket', headers: bearer(user.token) })
    ).json();
    const page = await browser.newPage();
    await page.goto(`${base}/v1`);
    const url = `${base.replace('http', 'ws')}/v1/ws`;
    await expect(page.evaluate(openInPage, { url, ticket })).resolves.toBe('open:service-ticket');

    const admin = await login(t.app, 'admin', TEST_ADMIN.password);
    const point = {
      latitude: 54.32,
      longitude: 10.14,
      altitude: 0,
      heading: 12,
      timestamp: 1_767_225_600,
      speed_kmh: 9.26,
      speed_mps: 2.57,
      speed_mph: 5.75,
      speed_knots: 5,
    };
    const posted = await t.app.inject({ method: 'POST', url: '/v1/gps', headers: bearer(admin), payload: point });
    await expect
      .poll(() =>
        page.evaluate(() =>
          (globalThis as unknown as { received: { type: string }[] }).received.filter((m) => m.type === 'GpsPoint'),
        ),
      )
      .toEqual([{ type: 'GpsPoint', channel: 'gps', data: posted.json().data }]);

    const second = await browser.newPage();
    await second.goto(`${base}/v1`);
    // The handshake is refused (401), which a browser reports as an abnormal close.
    await expect(second.evaluate(openInPage, { url, ticket })).resolves.toBe('closed:1006');
  });
});
