import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
import { TEST_ADMIN, testConfig } from '../../../test/helpers.js';

/**
 * The live map answers "who is where" (issue 49, item 2): markers in the device's colour and icon with its name, a
 * heading arrow while moving, a device followed as its points arrive until the user pans, the list's status with
 * relative times, search, filter and order, and 500 devices gathered into clusters.
 */
let setup: ConsoleInChromium | undefined;
beforeAll(async () => {
  // The admin makes 500 devices and then signs in within the minute: more requests than a user's rate limit.
  setup = await startConsoleInChromium({ rateLimit: { ...testConfig().rateLimit, user: 10_000 } });
});
afterAll(() => stopConsoleInChromium(setup), 180_000);

const nowSecs = () => Math.floor(Date.now() / 1000);
/** A point as a moving tracker sends it: 18 km/h heading east, battery and accuracy reported. */
const moving = (latitude: number, longitude: number, extra: Record<string, unknown> = {}) => ({
  latitude,
  longitude,
  timestamp: nowSecs(),
  speed_kmh: 18,
  speed_mps: 5,
  speed_mph: 11.18,
  speed_knots: 9.72,
  heading: 90,
  battery_level: 76,
  accuracy: 40,
  ...extra,
});

async function createDevice(body: { name: string; color?: string; icon?: 'boat' | 'person' | 'car' }) {
  return (await setup!.t.as(setup!.admin).post('/v1/devices', body).expect(201)).body.data.id;
}

/** The middle of an element's box, in page pixels. */
async function middle(locator: Locator) {
  const box = (await locator.boundingBox())!;
  return { x: box.x + box.width / 2, y: box.y + box.height / 2 };
}

/** How far the marker is from the middle of the map, in pixels. */
async function offCentre(page: Page, marker: Locator) {
  const [a, b] = await Promise.all([middle(marker), middle(page.locator('#map'))]);
  return Math.hypot(a.x - b.x, a.y - b.y);
}

/**
 * The most opaque pixel the map's canvases (trails, accuracy circles) hold at a point of the page, as 0–255: what
 * is drawn there, whatever lies over it.
 */
async function drawnAt(page: Page, at: { x: number; y: number }) {
  return page.locator('.leaflet-overlay-pane canvas').evaluateAll(
    (canvases, point) =>
      Math.max(
        0,
        ...canvases.map((canvas) => {
          const element = canvas as unknown as {
            getBoundingClientRect(): { left: number; top: number; width: number };
            width: number;
            getContext(kind: '2d'): { getImageData(x: number, y: number, w: number, h: number): { data: number[] } };
          };
          const box = element.getBoundingClientRect();
          const scale = element.width / box.width;
          const x = Math.round((point.x - box.left) * scale);
          const y = Math.round((point.y - box.top) * scale);
          return element.getContext('2d').getImageData(x, y, 1, 1).data[3] ?? 0;
        }),
      ),
    at,
  );
}

/** The names in the device list, in its order. */
const listed = (page: Page) => page.locator('.devices li .name').allTextContents();

describe('the live map in Chromium', { timeout: 180_000 }, () => {
  it('shows each device in its colour and icon, follows a moving one until the map is panned, and lists statuses', async () => {
    const { t, admin } = setup!;
    const stamp = Date.now();
    const kutter = `Kutter ${stamp}`;
    const walker = `Walker ${stamp}`;
    const lorry = `Lorry ${stamp}`;
    const kutterId = await createDevice({ name: kutter, color: '#c01c28', icon: 'boat' });
    await createDevice({ name: walker, icon: 'person' });
    const lorryId = await createDevice({ name: lorry, icon: 'car' });
    await t
      .as(admin)
      .post('/v1/gps', { ...moving(54.32, 10.14), device_id: kutterId })
      .expect(201);
    // Two hours ago and standing: offline (CONSOLE_STALE_AFTER_SECS is shorter).
    const old = { ...moving(54.3, 10.1), speed_kmh: 0, heading: null, timestamp: nowSecs() - 7200 };
    await t
      .as(admin)
      .post('/v1/gps', { ...old, device_id: lorryId })
      .expect(201);

    const context = await setup!.browser.newContext({ viewport: VIEWPORTS.desktop });
    const { page, problems } = await openConsole(context, setup!.base);
    await signIn(page, TEST_ADMIN.email, TEST_ADMIN.password);
    await page.getByText('Live updates on').waitFor();

    // The marker: the device's colour, its icon, its name beside it, and the heading arrow while it moves.
    const marker = page.locator(`.leaflet-marker-icon[data-device="${kutterId}"]`);
    await marker.waitFor();
    expect(await marker.getAttribute('aria-label')).toBe(kutter);
    expect(await marker.locator('.device-label').textContent()).toBe(kutter);
    expect(await marker.getAttribute('data-status')).toBe('moving');
    expect(await marker.evaluate((m) => m.classList.contains('has-heading'))).toBe(true);
    type Styles = { getComputedStyle: (element: unknown) => { backgroundColor: string } };
    const colour = marker
      .locator('.device-dot')
      .evaluate((dot) => (globalThis as unknown as Styles).getComputedStyle(dot).backgroundColor);
    expect(await colour).toBe('rgb(192, 28, 40)');
    const lorryMarker = page.locator(`.leaflet-marker-icon[data-device="${lorryId}"]`);
    expect(await lorryMarker.getAttribute('data-status')).toBe('offline');
    expect(await lorryMarker.evaluate((m) => m.classList.contains('has-heading'))).toBe(false);

    // The list: status in words with how long ago, speed and battery; never reported for the silent one.
    const entry = (name: string) => page.locator('.devices li').filter({ hasText: name }).locator('.meta');
    expect(await entry(kutter).textContent()).toMatch(/^Moving · (now|\d+ sec\. ago) · 18 km\/h · battery 76 %$/);
    expect(await entry(lorry).textContent()).toBe('Offline since 2 hr. ago · battery 76 %');
    expect(await entry(walker).textContent()).toBe('Never reported');
    expect(
      await page.locator('.devices li').filter({ hasText: kutter }).locator('time').getAttribute('datetime'),
    ).toMatch(/^\d{4}-\d\d-\d\dT/);

    // Search by name, filter by status, order by last seen.
    const search = page.getByLabel('Search by name');
    await search.fill(`kutter ${stamp}`);
    await expect.poll(() => listed(page)).toEqual([kutter]);
    await search.fill(String(stamp));
    await page.getByLabel('Status').selectOption('never');
    await expect.poll(() => listed(page)).toEqual([walker]);
    expect(await page.getByText('1 of 3 devices').count()).toBe(1);
    await page.getByLabel('Status').selectOption('');
    await page.getByLabel('Order').selectOption('seen');
    await expect.poll(() => listed(page)).toEqual([kutter, lorry, walker]);
    await page.getByLabel('Order').selectOption('name');
    await expect.poll(() => listed(page)).toEqual([kutter, lorry, walker].sort());
    await search.fill(`nobody ${stamp}`);
    await page.getByText('No device matches.').waitFor();
    await search.fill('');

    // A click on the entry zooms to the device, opens its details and follows it.
    await page
      .locator('.devices')
      .getByRole('button', { name: new RegExp(`^${kutter}`) })
      .click();
    const bar = page.locator('.follow-bar');
    await expect.poll(() => bar.textContent()).toContain(`Following ${kutter}`);
    await expect.poll(() => page.locator('.leaflet-popup-content').textContent()).toContain('± 40 m');
    expect(await offCentre(page, marker)).toBeLessThan(30);

    // Points posted through the API move the marker, and the map with it.
    for (const [step, longitude] of [10.1415, 10.143, 10.1445].entries()) {
      await t
        .as(admin)
        .post('/v1/gps', { ...moving(54.32, longitude), device_id: kutterId })
        .expect(201);
      await expect.poll(() => marker.getAttribute('data-longitude'), { timeout: 3000 }).toBe(String(longitude));
      await expect.poll(() => offCentre(page, marker), { timeout: 3000 }).toBeLessThan(30);
      if (step === 0) await page.keyboard.press('Escape');
    }
    // Behind the marker (west, where it came from) its trail; north of it only its accuracy circle's faint fill.
    const centre = await middle(marker.locator('.device-dot'));
    expect(await drawnAt(page, { x: centre.x - 24, y: centre.y })).toBeGreaterThan(150);
    const north = await drawnAt(page, { x: centre.x, y: centre.y - 22 });
    expect(north).toBeGreaterThan(10);
    expect(north).toBeLessThan(100);
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'live-map-follow');

    // The user pans: following stops, and the next point moves the marker but not the map.
    await page.setViewportSize(VIEWPORTS.desktop);
    const map = await middle(page.locator('#map'));
    // (The map dragged right and down: the marker leaves the middle eastwards, the way the device goes.)
    await page.mouse.move(map.x - 60, map.y + 60);
    await page.mouse.down();
    await page.mouse.move(map.x + 100, map.y + 100, { steps: 8 });
    await page.mouse.up();
    await expect.poll(() => bar.isHidden()).toBe(true);
    const before = await offCentre(page, marker);
    expect(before).toBeGreaterThan(100);
    await t
      .as(admin)
      .post('/v1/gps', { ...moving(54.32, 10.146), device_id: kutterId })
      .expect(201);
    await expect.poll(() => marker.getAttribute('data-longitude'), { timeout: 3000 }).toBe('10.146');
    await page.waitForTimeout(500);
    expect(await offCentre(page, marker)).toBeGreaterThan(before + 5);

    // A click on the marker follows it too.
    await marker.click();
    await expect.poll(() => bar.isVisible()).toBe(true);
    expect(problems).toEqual([]);
    await context.close();
  });

  it('gathers 500 devices into clusters that add up, in German and dark, and a cluster opens into its devices', async () => {
    const { t, admin } = setup!;
    const ids: string[] = [];
    for (let i = 0; i < 500; i += 1) ids.push(await createDevice({ name: `Flotte ${String(i).padStart(3, '0')}` }));
    try {
      await showsClusters(ids);
    } finally {
      // The other test of this file shares the instance: its few devices must not be clustered with these.
      for (let start = 0; start < ids.length; start += 25)
        await Promise.all(
          ids.slice(start, start + 25).map((id) => t.as(admin).delete(`/v1/devices/${id}`).expect(204)),
        );
    }
  });
});

async function showsClusters(ids: string[]) {
  const { t, admin } = setup!;
  // A grid of 25 × 20 around Hamburg, some 2 km apart.
  const points = ids.map((id, i) => ({
    ...moving(53.4 + Math.floor(i / 25) * 0.02, 9.8 + (i % 25) * 0.03),
    device_id: id,
  }));
  expect((await t.as(admin).post('/v1/gps/batch', points).expect(200)).body).toMatchObject({ stored: 500 });
  const located = (await t.as(admin).get('/v1/gps/current/devices').expect(200)).body.length;

  const context = await setup!.browser.newContext({
    viewport: VIEWPORTS.desktop,
    locale: 'de-DE',
    colorScheme: 'dark',
  });
  const { page, problems } = await openConsole(context, setup!.base);
  await page.getByLabel('Benutzername oder E-Mail').fill(TEST_ADMIN.email);
  await page.getByLabel('Passwort').fill(TEST_ADMIN.password);
  await page.getByRole('button', { name: 'Anmelden' }).click();
  await page.getByText('Live-Aktualisierung an').waitFor();
  const clusters = page.locator('.device-cluster');
  await clusters.first().waitFor();

  // Fitted to every device: each device is in one cluster or stands alone, and few elements draw them all.
  const counted = async () => {
    const numbers = await clusters.locator('[aria-hidden="true"]').allTextContents();
    const alone = await page.locator('.leaflet-marker-icon.device-marker').count();
    return { elements: numbers.length + alone, devices: numbers.reduce((sum, n) => sum + Number(n), alone) };
  };
  const all = await counted();
  expect(all.devices).toBe(located);
  expect(all.elements).toBeLessThan(60);
  expect(await clusters.first().textContent()).toMatch(/^(\d+)\1 Geräte hier: hineinzoomen$/);
  expect(await axeViolations(page)).toEqual([]);
  await screenshot(page, 'live-map-clusters');

  // A cluster clicked zooms into its part of the map: more, smaller groups.
  await page.setViewportSize(VIEWPORTS.desktop);
  const biggest = clusters.filter({ hasText: /\d\d/ }).first();
  await biggest.click();
  await expect.poll(async () => (await counted()).devices).toBeLessThan(located);

  // The list holds only the rows in view; scrolled to its end, the last devices are rendered.
  expect(await page.locator('.devices li').count()).toBeLessThan(40);
  expect(await page.locator('.devices li').filter({ hasText: 'Flotte 499' }).count()).toBe(0);
  await page.locator('.devices').evaluate((box) => box.scrollTo(0, box.scrollHeight));
  await page.locator('.devices li').filter({ hasText: 'Flotte 499' }).waitFor();
  expect(await page.locator('.devices li').count()).toBeLessThan(40);
  await page.locator('.devices').evaluate((box) => box.scrollTo(0, 0));

  // The list in German: search and status.
  await page.getByLabel('Nach Namen suchen').fill('Flotte 12');
  await expect
    .poll(() => listed(page))
    .toEqual([
      'Flotte 120',
      'Flotte 121',
      'Flotte 122',
      'Flotte 123',
      'Flotte 124',
      'Flotte 125',
      'Flotte 126',
      'Flotte 127',
      'Flotte 128',
      'Flotte 129',
    ]);
  // "jetzt" for a point just posted, "vor 12 Sek." once a busy machine took that long to show it.
  expect(await page.locator('.devices li').first().locator('.meta').textContent()).toMatch(
    /^In Bewegung · (jetzt|vor \d+ Sek\.) · 18 km\/h · Akku 76 %$/,
  );
  await page.getByLabel('Status').selectOption('offline');
  await expect.poll(() => page.getByText('Kein Gerät passt.').count()).toBe(1);
  await screenshot(page, 'live-map-list-de');
  expect(problems).toEqual([]);
  await context.close();
}
