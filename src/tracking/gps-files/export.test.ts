import { readFileSync } from 'node:fs';
import { validateXML } from 'xmllint-wasm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '../../../test/client.js';
import {
  buildTestApp,
  createApiKey,
  createUser,
  expectPermissionChecks,
  login,
  TEST_ADMIN,
  testConfig,
  UNKNOWN_ID,
  type TestApp,
} from '../../../test/helpers.js';

const GPX_XSD = readFileSync(new URL('../../../test/fixtures/gps-files/gpx-1.1.xsd', import.meta.url), 'utf8');
const BASE = 1_767_225_600; // 2026-01-01T00:00:00Z

describe('GPS file export', () => {
  let t: TestApp;
  let admin: string;
  let api: Client;
  beforeAll(async () => {
    t = await buildTestApp({ config: { rateLimit: { ...testConfig().rateLimit, gpsWrite: 1000 } } });
    admin = await login(t.app, 'admin', TEST_ADMIN.password);
    api = t.as(admin);
  });
  afterAll(() => t.close());

  const newDevice = async (name = 'Boat <1> & "Co"') =>
    (await api.post('/v1/devices', { name }).expect(201)).body.data.id;
  /** Three points a minute apart (the second without altitude, the third at lon 180), then one a day later. */
  async function track(deviceId: string) {
    const point = (n: number, extra: Record<string, unknown> = {}) => ({
      latitude: 53.5 + n / 1000,
      longitude: 9.9 + n / 1000,
      altitude: 10 + n,
      heading: 90,
      timestamp: BASE + n * 60,
      speed_kmh: 36,
      speed_mps: 10,
      speed_mph: 22.37,
      speed_knots: 19.44,
      hdop: 0.9,
      device_id: deviceId,
      ...extra,
    });
    for (const body of [
      point(0),
      point(1, { altitude: null, hdop: null }),
      point(2, { longitude: 180, latitude: 0.0000001 }),
      point(3, { timestamp: BASE + 86_400 }),
    ]) {
      await api.post('/v1/gps', body).expect(201);
    }
  }

  it('writes GPX 1.1 that the GPX 1.1 schema accepts, with a file name and content type', async () => {
    const device = await newDevice();
    await track(device);
    const response = await api.get('/v1/gps/export', { query: { device_id: device, format: 'gpx' } }).expect(200);
    expect(response.headers['content-type']).toBe('application/gpx+xml');
    expect(response.headers['content-disposition']).toBe(
      'attachment; filename="track-Boat-1-Co-2026-11-26.gpx"'.replace(
        '2026-11-26',
        new Date().toISOString().slice(0, 10),
      ),
    );
    const result = await validateXML({
      xml: [{ fileName: 'export.gpx', contents: response.text }],
      schema: [{ fileName: 'gpx.xsd', contents: GPX_XSD }],
    });
    expect(result.errors).toEqual([]);
    expect(result.valid).toBe(true);
    expect(response.text).toContain('<name>Boat &lt;1&gt; &amp; &quot;Co&quot;</name>');
    expect(response.text.match(/<trkpt /g)).toHaveLength(4);
    expect(response.text).toContain(
      '<trkpt lat="53.5" lon="9.9"><ele>10</ele><time>2026-01-01T00:00:00.000Z</time><hdop>0.9</hdop><extensions><wg:speed>10</wg:speed><wg:course>90</wg:course></extensions></trkpt>',
    );
    expect(response.text).toContain('<trkpt lat="0.0000001" lon="-180">');
  });

  it("names the file by the day in the reader's time zone (their preferences)", async () => {
    const user = await createUser(t.app);
    const own = t.as(user.token);
    await own.patch('/v1/users/me/preferences', { time_zone: 'Asia/Tokyo' }).expect(200);
    const device = (await own.post('/v1/devices', { name: 'Kayak' }).expect(201)).body.data.id;
    // 23:30 UTC on New Year's Day is 08:30 on 2 January in Tokyo.
    const query = { device_id: device, from: '2026-01-01T23:30:00.000Z', format: 'csv' as const };
    const response = await own.get('/v1/gps/export', { query }).expect(200);
    expect(response.headers['content-disposition']).toBe('attachment; filename="track-Kayak-2026-01-02.csv"');
  });

  it('keeps to the time range, both ends inclusive', async () => {
    const device = await newDevice('range');
    await track(device);
    const from = new Date((BASE + 60) * 1000).toISOString();
    const to = new Date((BASE + 120) * 1000).toISOString();
    const response = await api
      .get('/v1/gps/export', { query: { device_id: device, from, to, format: 'csv' } })
      .expect(200);
    expect(response.headers['content-disposition']).toBe(`attachment; filename="track-range-${from.slice(0, 10)}.csv"`);
    const lines = response.text.split('\r\n');
    expect(lines[0]).toBe(
      'timestamp,latitude,longitude,altitude,heading,speed_kmh,speed_mps,speed_mph,speed_knots,hdop,vdop,pdop,trip_id,id',
    );
    expect(lines.slice(1, -1).map((line) => line.split(',').slice(0, 4).join(','))).toEqual([
      '2026-01-01T00:01:00.000Z,53.501,9.901,',
      '2026-01-01T00:02:00.000Z,1e-7,180,12',
    ]);
    expect(lines.at(-1)).toBe('');
    const backwards = await api.get('/v1/gps/export', { query: { device_id: device, from: to, to: from } }).expect(400);
    expect(backwards.body.code).toBe('gps_file.bad_range');
  });

  it('writes GeoJSON (RFC 7946): Point features, longitude first, altitude third', async () => {
    const device = await newDevice('geo');
    await track(device);
    const response = await api.get('/v1/gps/export', {
      query: { device_id: device },
      headers: { accept: 'application/geo+json' },
    });
    expect(response.headers['content-type']).toBe('application/geo+json');
    const collection = JSON.parse(response.text);
    expect(collection.type).toBe('FeatureCollection');
    expect(collection.features).toHaveLength(4);
    expect(collection.features[0]).toMatchObject({
      type: 'Feature',
      geometry: { type: 'Point', coordinates: [9.9, 53.5, 10] },
      properties: { timestamp: '2026-01-01T00:00:00.000Z', speed_mps: 10, heading: 90, hdop: 0.9 },
    });
    expect(collection.features[1].geometry.coordinates).toEqual([9.901, 53.501]);
  });

  it('writes KML 2.2: a Placemark with a TimeStamp and a Point per point', async () => {
    const device = await newDevice('kml');
    await track(device);
    const response = await api.get('/v1/gps/export', {
      query: { device_id: device },
      headers: { accept: 'application/vnd.google-earth.kml+xml' },
    });
    expect(response.headers['content-type']).toBe('application/vnd.google-earth.kml+xml');
    expect(response.text).toMatch(
      /^<\?xml version="1.0" encoding="UTF-8"\?>\n<kml xmlns="http:\/\/www.opengis.net\/kml\/2.2">/,
    );
    expect(response.text.match(/<Placemark>/g)).toHaveLength(4);
    expect(response.text).toContain(
      '<TimeStamp><when>2026-01-01T00:00:00.000Z</when></TimeStamp><Point><altitudeMode>absolute</altitudeMode><coordinates>9.9,53.5,10</coordinates></Point>',
    );
    expect(response.text).toContain('<coordinates>9.901,53.501</coordinates>');
  });

  it('chooses by Accept, GPX for anything; 406 for nothing it writes; format wins over Accept', async () => {
    const device = await newDevice('accept');
    const as = (accept: string, format?: 'csv') =>
      api.get('/v1/gps/export', { query: { device_id: device, format }, headers: { accept } });
    expect((await as('*/*')).headers['content-type']).toBe('application/gpx+xml');
    expect((await as('text/html, text/csv;q=0.5')).headers['content-type']).toBe('text/csv; charset=utf-8');
    expect((await as('application/json;q=0.2, application/vnd.google-earth.kml+xml')).headers['content-type']).toBe(
      'application/vnd.google-earth.kml+xml',
    );
    const refused = await as('image/png').expect(406);
    expect(refused.body.code).toBe('gps_file.not_acceptable');
    expect((await as('image/png', 'csv')).headers['content-type']).toBe('text/csv; charset=utf-8');
    // No points: a valid, empty file.
    const empty = await as('*/*');
    expect(empty.text).toContain('<trkseg>\n</trkseg>');
    expect(JSON.parse((await as('application/geo+json')).text)).toEqual({
      type: 'FeatureCollection',
      name: 'accept',
      features: [],
    });
  });

  it('exports a trip, oldest first; 404 for an unknown trip or device', async () => {
    const device = await newDevice('trip device');
    const trip = (
      await api.post('/v1/trips', { name: 'Elbe run / 2026', device_id: device, gps_logging_enabled: true }).expect(201)
    ).body.data;
    await api.patch(`/v1/trips/${trip.id}`, { status: 'active' }).expect(200);
    await track(device);
    const response = await api.get(`/v1/trips/${trip.id}/export`, { query: { format: 'gpx' } }).expect(200);
    expect(response.headers['content-disposition']).toBe('attachment; filename="trip-Elbe-run-2026.gpx"');
    const times = [...response.text.matchAll(/<time>([^<]+)<\/time><(?:hdop|extensions)/g)].map((m) => m[1]);
    expect(times).toEqual([
      '2026-01-01T00:00:00.000Z',
      '2026-01-01T00:01:00.000Z',
      '2026-01-01T00:02:00.000Z',
      '2026-01-02T00:00:00.000Z',
    ]);
    const valid = await validateXML({
      xml: [{ fileName: 'trip.gpx', contents: response.text }],
      schema: [{ fileName: 'gpx.xsd', contents: GPX_XSD }],
    });
    expect(valid.valid).toBe(true);
    expect((await api.get(`/v1/trips/${UNKNOWN_ID}/export`)).body).toMatchObject({ code: 'trip.not_found' });
    expect((await api.get('/v1/gps/export', { query: { device_id: UNKNOWN_ID } })).body).toMatchObject({
      code: 'device.not_found',
    });
  });

  it('requires gps:read for a device and trips:read for a trip', async () => {
    const device = await newDevice('guarded');
    const { key } = await createApiKey(t.app, admin, { name: 'writer', scopes: ['gps:write'] });
    expect((await t.as(key).get('/v1/gps/export', { query: { device_id: device } })).status).toBe(403);
    await expectPermissionChecks(t.app, admin, [
      { method: 'GET', url: `/v1/gps/export?device_id=${device}`, permission: 'gps:read' },
      { method: 'GET', url: `/v1/trips/${UNKNOWN_ID}/export`, permission: 'trips:read' },
    ]);
  });
});
