import type { BrowserContextOptions } from 'playwright-core';
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
import { createRoleWith, createUser } from '../../../test/helpers.js';

/**
 * History that follows the user (issue 49, item 4): an import moves the view to the days it covers with its report
 * beside, into a new device when the user has none; past imports listed with their reports, one's points removed;
 * the presets and previous/next day. The browser's clock is fixed (and its time zone UTC), so "today" is known.
 */
let setup: ConsoleInChromium | undefined;
beforeAll(async () => {
  setup = await startConsoleInChromium();
});
afterAll(() => stopConsoleInChromium(setup), 180_000);

const TODAY = new Date('2026-03-04T10:00:00Z');
const SPEEDS = { speed_kmh: 12, speed_mps: 3.33, speed_mph: 7.46, speed_knots: 6.48 };

const GPX = (times: string[]) =>
  `<?xml version="1.0"?><gpx version="1.1" creator="test" xmlns="http://www.topografix.com/GPX/1/1"><trk><trkseg>${times
    .map((time, i) => `<trkpt lat="${53.55 + i * 0.002}" lon="${9.99 + i * 0.002}"><time>${time}</time></trkpt>`)
    .join('')}</trkseg></trk></gpx>`;

/** A console signed in as `user` whose clock stands at TODAY, in UTC. */
async function signedIn(user: { username: string; password: string }, options: BrowserContextOptions = {}) {
  const context = await setup!.browser.newContext({ viewport: VIEWPORTS.desktop, timezoneId: 'UTC', ...options });
  await context.clock.setFixedTime(TODAY);
  const { page, problems } = await openConsole(context, setup!.base);
  await signIn(page, user.username, user.password);
  await page.locator('#sign-out').waitFor();
  return { context, page, problems };
}

describe('History in the console', { timeout: 120_000 }, () => {
  it("imports into a new device when the user has none, moves to the import's days with its report, and removes its points", async () => {
    const { t, base } = setup!;
    const ada = await createUser(t.app);
    const api = t.as(ada.token);
    const { context, page, problems } = await signedIn(ada);
    await page.goto(`${base}/console/#/history/import`);
    const form = page.locator('details.import').first();
    const into = form.getByLabel('Into device', { exact: true });
    // Arrived from the first run's "Import history": the form is open, a new device the one choice.
    await expect.poll(() => form.getAttribute('open')).toBe('');
    expect(await into.locator('option').allTextContents()).toEqual(['A new device']);
    expect(await into.inputValue()).toBe('');
    expect(await form.locator(`[id="${await into.getAttribute('aria-describedby')}"]`).textContent()).toBe(
      'A new device of yours is made for the points, with the name below (you can rename it later). Then History shows it over the days they cover.',
    );
    await form.getByLabel('Name of the new device').fill('Ride log');
    await form.getByLabel('File', { exact: true }).setInputFiles({
      name: 'ride.gpx',
      mimeType: 'application/gpx+xml',
      buffer: Buffer.from(GPX(['2026-03-02T08:00:00Z', '2026-03-02T08:01:00Z', '2026-03-02T08:02:00Z', 'no time'])),
    });
    await form.getByRole('button', { name: 'Import', exact: true }).click();
    const report = form.locator('.import-report');
    await report.getByText('Imported ride.gpx: 3 points.').waitFor();
    expect(await report.locator('p').allTextContents()).toEqual([
      'Imported ride.gpx: 3 points.',
      '3 imported, 0 already there, 1 refused',
      'Points from 3/2/26, 8:00:00 AM to 3/2/26, 8:02:00 AM',
    ]);

    // The view moved to the import's device and day, two days before "today".
    const map = page.locator('.history .map');
    await expect.poll(() => map.getAttribute('data-points')).toBe('3');
    const devices = (await api.get('/v1/devices').expect(200)).body.data;
    expect(devices.map((d) => [d.name, d.owner_id])).toEqual([['Ride log', ada.id]]);
    expect(await page.getByLabel('Device', { exact: true }).inputValue()).toBe(devices[0]!.id);
    expect(await page.getByLabel('From', { exact: true }).inputValue()).toBe('2026-03-02T00:00');
    expect(await page.getByLabel('To', { exact: true }).inputValue()).toBe('2026-03-02T23:59');
    expect(await page.locator('.summary').textContent()).toBe('3 points: 3/2/26, 8:00:00 AM – 3/2/26, 8:02:00 AM');
    expect(await into.inputValue()).toBe(devices[0]!.id);
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'history-import');

    // Past imports: this one, with its report; its points removed after the confirmation.
    const [imported] = (await api.get('/v1/gps/imports').expect(200)).body.data;
    const past = page.locator('details.past-imports');
    await past.getByText('Past imports', { exact: true }).click();
    const entry = past.locator(`li[data-import="${imported!.id}"]`);
    expect(await entry.locator('p').first().textContent()).toBe('Done · gpx');
    expect(await entry.textContent()).toContain('3 imported, 0 already there, 1 refused');
    // Elsewhere in time, Show brings the import's device and day back.
    await page.getByRole('button', { name: 'Today', exact: true }).click();
    await expect.poll(() => map.getAttribute('data-points')).toBe('0');
    await entry.getByRole('button', { name: /^Show: Ride log, / }).click();
    await expect.poll(() => map.getAttribute('data-points')).toBe('3');
    expect(await page.getByLabel('From', { exact: true }).inputValue()).toBe('2026-03-02T00:00');
    await entry.getByRole('button', { name: /^Remove its points: Ride log, / }).click();
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'history-import-remove');
    await entry.getByRole('button', { name: /^Really remove the points\?: Ride log, / }).click();
    await entry.getByText(/^Points removed on .+: 3\.$/).waitFor();
    expect(await entry.getByRole('button', { name: /^Remove its points/ }).count()).toBe(0);
    await expect.poll(() => map.getAttribute('data-points')).toBe('0');
    expect(await page.locator('.summary').textContent()).toBe('No points of this device in that time range.');
    const after = (await api.get(`/v1/gps/imports/${imported!.id}`).expect(200)).body.data;
    expect([after.removed, after.reverted_at === null]).toEqual([3, false]);
    const left = await api
      .get(`/v1/gps/track?device_id=${devices[0]!.id}&from=2026-03-02T00:00:00.000Z&to=2026-03-03T00:00:00.000Z`)
      .expect(200);
    expect(left.body.total).toBe(0);
    expect(problems).toEqual([]);
    await context.close();
  });

  it('says what to do when there is no device to import into and none may be made', async () => {
    const { t, base } = setup!;
    const role = await createRoleWith(t.app, `Importer ${Date.now()}`, [
      'gps:read_own',
      'devices:read_own',
      'gps:write_own',
    ]);
    const cy = await createUser(t.app, [role]);
    const { context, page, problems } = await signedIn(cy);
    await page.goto(`${base}/console/#/history/import`);
    const form = page.locator('details.import');
    await form
      .getByText(
        'An import puts its points on a device of yours, and you have none yet: connect your phone, or track this browser from the map first.',
      )
      .waitFor();
    expect(await form.getAttribute('open')).toBe('');
    expect([await form.getByLabel('Into device').isVisible(), await form.getByLabel('File').isVisible()]).toEqual([
      false,
      false,
    ]);
    expect(await axeViolations(page)).toEqual([]);
    expect(problems).toEqual([]);
    await context.close();
  });

  it('moves between days with the presets and previous and next day (German, dark), in the chosen time zone', async () => {
    const { t, base } = setup!;
    const bo = await createUser(t.app);
    const api = t.as(bo.token);
    const device = (await api.post('/v1/devices', { name: 'Kutter' }).expect(201)).body.data.id;
    // Per day (UTC): four points today, three yesterday, two four days ago, one tomorrow.
    const days = { '2026-03-04': 4, '2026-03-03': 3, '2026-02-28': 2, '2026-03-05': 1 };
    const points = Object.entries(days).flatMap(([day, count]) =>
      Array.from({ length: count }, (_, i) => ({
        device_id: device,
        latitude: 54.3 + i * 0.001,
        longitude: 10.1 + i * 0.001,
        timestamp: Date.parse(`${day}T09:0${i}:00Z`) / 1000,
        ...SPEEDS,
      })),
    );
    expect((await api.post('/v1/gps/batch', points).expect(200)).body).toMatchObject({ stored: 10 });

    await api.patch(`/v1/users/${bo.id}/locale`, { locale: 'de' }).expect(200);
    const { context, page, problems } = await signedIn(bo, { colorScheme: 'dark' });
    await page.goto(`${base}/console/#/history`);
    await page.getByLabel('Gerät', { exact: true }).selectOption({ label: 'Kutter' });
    const map = page.locator('.history .map');
    const range = async () => [
      await page.getByLabel('Von', { exact: true }).inputValue(),
      await page.getByLabel('Bis', { exact: true }).inputValue(),
      await map.getAttribute('data-points'),
    ];
    const presets = page.getByRole('group', { name: 'Zeitraum' });
    /** Clicks a button of the presets and waits for the track it reads. */
    const choose = async (name: string) => {
      await Promise.all([
        page.waitForResponse((answer) => new URL(answer.url()).pathname === '/v1/gps/track'),
        presets.getByRole('button', { name, exact: true }).click(),
      ]);
    };
    expect(await presets.getByRole('button').allTextContents()).toEqual([
      'Vorheriger Tag',
      'Heute',
      'Gestern',
      'Letzte 7 Tage',
      'Nächster Tag',
    ]);
    await choose('Heute');
    await expect.poll(range).toEqual(['2026-03-04T00:00', '2026-03-04T23:59', '4']);
    await choose('Gestern');
    await expect.poll(range).toEqual(['2026-03-03T00:00', '2026-03-03T23:59', '3']);
    await choose('Vorheriger Tag');
    await expect.poll(range).toEqual(['2026-03-02T00:00', '2026-03-02T23:59', '0']);
    expect(await page.locator('.summary').textContent()).toBe('Keine Punkte dieses Geräts in diesem Zeitraum.');
    await choose('Nächster Tag');
    await expect.poll(range).toEqual(['2026-03-03T00:00', '2026-03-03T23:59', '3']);
    await choose('Nächster Tag');
    await expect.poll(range).toEqual(['2026-03-04T00:00', '2026-03-04T23:59', '4']);
    await choose('Nächster Tag');
    await expect.poll(range).toEqual(['2026-03-05T00:00', '2026-03-05T23:59', '1']);
    await choose('Letzte 7 Tage');
    await expect.poll(range).toEqual(['2026-02-26T00:00', '2026-03-04T23:59', '9']);
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'history-presets-de-dark');

    // In the time zone of Bo's preferences (UTC+14, where it is 00:00 on the 5th): days begin there, not in the
    // browser's UTC.
    await api.patch('/v1/users/me/preferences', { time_zone: 'Pacific/Kiritimati' }).expect(200);
    await page.reload();
    await page.getByLabel('Gerät', { exact: true }).selectOption({ label: 'Kutter' });
    await choose('Heute');
    await expect.poll(range).toEqual(['2026-03-05T00:00', '2026-03-05T23:59', '1']);
    await choose('Gestern');
    await expect.poll(range).toEqual(['2026-03-04T00:00', '2026-03-04T23:59', '4']);
    expect(problems).toEqual([]);
    await context.close();
  });
});
