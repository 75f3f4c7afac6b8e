import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GPSLOGGER_PARAMETERS, gpsloggerUrl, ingestUrls } from '../../../console/js/trackers.js';
import { bearer, buildTestApp, deviceWithKey, login, TEST_ADMIN, type TestApp } from '../../../test/helpers.js';

/** What the Connect page gives each tracker app (console/js/trackers.js), held to docs/gps.md and replayed. */
describe('tracker app settings of the Connect page', () => {
  let t: TestApp;
  let admin: string;
  beforeAll(async () => {
    t = await buildTestApp();
    admin = await login(t.app, 'admin', TEST_ADMIN.password);
  });
  afterAll(() => t.close());

  it('are the ones docs/gps.md shows', () => {
    const docs = readFileSync(new URL('../../../docs/gps.md', import.meta.url), 'utf8');
    const urls = ingestUrls('https://gps.example.org');
    for (const url of [urls.traccar, urls.owntracks, urls.overland]) expect(docs).toContain(`\`${url}\``);
    // The block after "GPSLogger URL": the one line a user copies into the app.
    expect(/GPSLogger URL \(one line[\s\S]*?```\n(.*)\n```/.exec(docs)?.[1]).toBe(
      gpsloggerUrl('https://gps.example.org', 'YOUR_KEY'),
    );
  });

  it('GPSLogger: its URL filled in as the app does (%SPD = 10 m/s) is stored at 10 m/s, 36 km/h', async () => {
    const { key, deviceId } = await deviceWithKey(t.app, admin, { name: 'gpslogger' });
    // GPSLogger's values for one fix (as docs/gps.md's GPSLogger section shows them), put in without URL-encoding as it does.
    const values: Record<string, string> = {
      '%LAT': '12.193',
      '%LON': '19.111',
      '%TIMESTAMP': '1457205869',
      '%ALT': '45.0',
      '%ACC': '8.0',
      '%DIR': '359.0',
      '%SPD': '10.0',
      '%BATT': '91.0',
      '%ISCHARGING': 'true',
      '%HDOP': '',
    };
    expect(GPSLOGGER_PARAMETERS.map(([, placeholder]) => placeholder).sort()).toEqual(Object.keys(values).sort());
    let url = gpsloggerUrl('http://localhost:8080', key);
    for (const [placeholder, value] of Object.entries(values)) url = url.replace(placeholder, value);
    const sent = await t.app.inject({ method: 'GET', url: url.slice('http://localhost:8080'.length) });
    expect([sent.statusCode, sent.body]).toEqual([200, '']);

    const listed = await t.app.inject({ method: 'GET', url: `/v1/gps?device_id=${deviceId}`, headers: bearer(admin) });
    expect(listed.statusCode).toBe(200);
    const points = listed.json().data;
    expect(points).toHaveLength(1);
    expect(points[0]).toMatchObject({
      latitude: 12.193,
      longitude: 19.111,
      timestamp: '2016-03-05T19:24:29.000Z',
      altitude: 45,
      accuracy: 8,
      heading: 359,
      speed_mps: 10,
      speed_kmh: 36,
      battery_level: 91,
      charging: true,
      hdop: null,
    });
    expect(points[0].speed_knots).toBeCloseTo(19.438, 3);
  });
});
