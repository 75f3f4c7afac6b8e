import { afterAll, beforeAll, expect, it } from 'vitest';
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
import { TEST_ADMIN } from '../../../test/helpers.js';

/**
 * The console's trips page in Chromium: a trip created with its device, category, origin and destination records
 * what the device sends while active (issue 49, item 4); an opened trip is drawn with History's track module from
 * GET /v1/gps/track.
 */
let setup: ConsoleInChromium | undefined;
const speeds = (kmh: number) => ({
  speed_kmh: kmh,
  speed_mps: kmh / 3.6,
  speed_mph: kmh / 1.609344,
  speed_knots: kmh / 1.852,
});

beforeAll(async () => {
  setup = await startConsoleInChromium();
});
afterAll(() => stopConsoleInChromium(setup), 180_000);

it(
  "opening a trip draws its points as a track read from GET /v1/gps/track over the trip's time range",
  { timeout: 120_000 },
  async () => {
    const { t, base, browser, admin } = setup!;
    const api = t.as(admin);
    const device = (await api.post('/v1/devices', { name: `Tug ${Date.now()}` }).expect(201)).body.data.id;
    const name = `Elbe ${Date.now()}`;
    const trip = (await api.post('/v1/trips', { name, device_id: device, gps_logging_enabled: true }).expect(201)).body
      .data.id;
    const start = Date.UTC(2026, 2, 10, 9, 0, 0) / 1000;
    const point = (i: number) => ({
      device_id: device,
      latitude: 53.54 + i * 0.0004,
      longitude: 9.9 + Math.sin(i / 15) * 0.01,
      timestamp: start + i * 30,
      altitude: 0,
      heading: 0,
      ...speeds(10 + (i % 40)),
    });
    // Before the trip is active: the device's points then are not the trip's, and earlier than its first.
    const before = [0, 1, 2].map((i) => point(i - 10));
    expect((await api.post('/v1/gps/batch', before).expect(200)).body).toMatchObject({ stored: 3 });
    await api.patch(`/v1/trips/${trip}`, { status: 'active' }).expect(200);
    const during = Array.from({ length: 120 }, (_, i) => point(i));
    expect((await api.post('/v1/gps/batch', during).expect(200)).body).toMatchObject({ stored: 120 });
    await api.patch(`/v1/trips/${trip}`, { status: 'completed' }).expect(200);

    const context = await browser.newContext({ viewport: VIEWPORTS.desktop });
    const { page, problems } = await openConsole(context, base);
    await signIn(page, 'admin', TEST_ADMIN.password);
    await page.getByRole('button', { name: 'Sign out', exact: true }).waitFor();
    await page.goto(`${base}/console/#/trips`);
    const [request] = await Promise.all([
      page.waitForRequest((candidate) => new URL(candidate.url()).pathname === '/v1/gps/track'),
      page.getByRole('button', { name, exact: true }).click(),
    ]);
    const asked = new URL(request.url()).searchParams;
    expect([asked.get('device_id'), asked.get('from'), asked.get('to')]).toEqual([
      device,
      new Date(start * 1000).toISOString(),
      new Date((start + 119 * 30) * 1000).toISOString(),
    ]);
    expect(Number(asked.get('width'))).toBeGreaterThan(0);

    const map = page.locator('.trip-map');
    await expect.poll(() => map.getAttribute('data-points')).toBe('120');
    expect(await map.getAttribute('data-trip')).toBe(trip);
    // The track is History's canvas over the map (track.js), and something is drawn on it.
    const canvas = map.locator('canvas.track-canvas');
    // (The root tsconfig has no DOM types: the canvas is described by what is used of it.)
    type Canvas = {
      width: number;
      height: number;
      getContext(kind: '2d'): { getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray } };
    };
    await expect
      .poll(() =>
        canvas.evaluate((node) => {
          const element = node as unknown as Canvas;
          const pixels = element.getContext('2d').getImageData(0, 0, element.width, element.height).data;
          let painted = 0;
          for (let i = 3; i < pixels.length; i += 4) if (pixels[i]! > 0) painted++;
          return painted;
        }),
      )
      .toBeGreaterThan(500);
    expect(await page.locator('.legend').textContent()).toMatch(/^Speed: ≤ \d+/);
    expect(await page.locator('.exports strong').textContent()).toBe(name);
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'trip-track');
    expect(problems).toEqual([]);
    await context.close();
  },
);

it(
  'a trip created in the console with its device, category, origin and destination records the points the device sends while active, and is drawn when opened',
  { timeout: 120_000 },
  async () => {
    const { t, base, browser, admin } = setup!;
    const api = t.as(admin);
    const stamp = Date.now();
    const deviceName = `Barge ${stamp}`;
    const device = (await api.post('/v1/devices', { name: deviceName }).expect(201)).body.data.id;
    const category = (await api.post('/v1/trip-categories', { name: `Freight ${stamp}` }).expect(201)).body.data.id;
    const origin = (await api.post('/v1/locations', { name: `Pier ${stamp}` }).expect(201)).body.data.id;
    const destination = (await api.post('/v1/locations', { name: `Lock ${stamp}` }).expect(201)).body.data.id;

    const context = await browser.newContext({ viewport: VIEWPORTS.desktop, colorScheme: 'dark' });
    const { page, problems } = await openConsole(context, base);
    await signIn(page, 'admin', TEST_ADMIN.password);
    await page.getByRole('button', { name: 'Sign out', exact: true }).waitFor();
    await page.goto(`${base}/console/#/trips`);
    const form = page.locator('form.trip-form');
    const name = `Canal ${stamp}`;
    await form.getByLabel('Name', { exact: true }).fill(name);
    await form.getByLabel('Device', { exact: true }).selectOption({ label: deviceName });
    await form.getByLabel('Category', { exact: true }).selectOption({ label: `Freight ${stamp}` });
    await form.getByLabel('From', { exact: true }).selectOption({ label: `Pier ${stamp}` });
    await form.getByLabel('To', { exact: true }).selectOption({ label: `Lock ${stamp}` });
    expect(await form.getByText("While the trip is active, the points this device sends are the trip's.").count()).toBe(
      1,
    );
    expect(await axeViolations(page)).toEqual([]);
    await form.getByRole('button', { name: 'Create trip' }).click();
    const row = page.getByRole('row').filter({ has: page.getByRole('button', { name, exact: true }) });
    await row.waitFor();
    expect(await row.getByRole('cell').nth(1).textContent()).toBe(deviceName);
    const trips = (await api.get('/v1/trips?limit=100').expect(200)).body.data.filter((trip) => trip.name === name);
    expect(
      trips.map((trip) => [
        trip.device_id,
        trip.category_id,
        trip.origin_id,
        trip.destination_id,
        trip.gps_logging_enabled,
        trip.status,
      ]),
    ).toEqual([[device, category, origin, destination, true, 'draft']]);
    const trip = trips[0]!.id;

    // Started in the console; the device then sends a track, which becomes the trip's.
    await row.getByRole('button', { name: `Set to active: ${name}` }).click();
    await page.getByRole('button', { name: `Set to paused: ${name}` }).waitFor();
    const start = Math.floor(Date.now() / 1000) - 3600;
    const points = Array.from({ length: 60 }, (_, i) => ({
      device_id: device,
      latitude: 52.4 + i * 0.0005,
      longitude: 13.0 + Math.sin(i / 10) * 0.005,
      timestamp: start + i * 20,
      ...speeds(8 + (i % 10)),
    }));
    expect((await api.post('/v1/gps/batch', points).expect(200)).body).toMatchObject({ stored: 60 });
    expect((await api.get(`/v1/trips/${trip}/gps?limit=1`).expect(200)).body.pagination.total).toBe(60);

    await page.getByRole('button', { name, exact: true }).click();
    const map = page.locator('.trip-map');
    await expect.poll(() => map.getAttribute('data-points')).toBe('60');
    expect(await map.getAttribute('data-trip')).toBe(trip);
    expect(await page.locator('.legend').textContent()).toMatch(/^Speed: ≤ \d+/);
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'trip-created-dark');
    expect(problems).toEqual([]);
    await context.close();
  },
);
