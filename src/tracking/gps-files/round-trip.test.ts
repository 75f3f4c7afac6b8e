import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client, Options } from '../../../test/client.js';
import { buildTestApp, login, onEveryNode, TEST_ADMIN, type TestApp } from '../../../test/helpers.js';
import { EXPORT_FORMATS } from './writers/index.js';

const BASE = 1_767_225_600; // 2026-01-01T00:00:00Z

type ImportFormat = NonNullable<NonNullable<Options<'post', '/v1/gps/import'>['query']>['format']>;

describe('GPS files: every export format reads back through the importer', () => {
  let t: TestApp;
  let api: Client;
  beforeAll(async () => {
    t = await buildTestApp();
    api = t.as(await login(t.app, 'admin', TEST_ADMIN.password));
  });
  afterAll(() => t.close());

  const newDevice = async (name: string) => (await api.post('/v1/devices', { name }).expect(201)).body.data.id;
  /** time, latitude, longitude, altitude, heading, speed (km/h) of each point, from our CSV export. */
  async function pointsOf(device: string, columns = 6) {
    const csv = (await api.get('/v1/gps/export', { query: { device_id: device, format: 'csv' } })).text;
    return csv
      .split('\r\n')
      .slice(1, -1)
      .map((line) => line.split(',').slice(0, columns).join(','));
  }

  async function importInto(device: string, format: ImportFormat, body: string) {
    const started = await api.post('/v1/gps/import', body, { query: { device_id: device, format } }).expect(202);
    await onEveryNode(t, (services) => services.gpsFiles.idle());
    const report = (await api.get(`/v1/gps/imports/${started.body.data.id}`).expect(200)).body.data;
    expect(report).toMatchObject({ status: 'done', imported: 4, refused_count: 0, notes_count: 0, error: null });
  }

  it.each(EXPORT_FORMATS)(
    '%s: points with and without speed, course and altitude come back as they left',
    async (format) => {
      const source = await newDevice(`source ${format}`);
      // The spec's POST /v1/gps needs every speed: points without one come from files and trackers.
      const csv =
        'timestamp,latitude,longitude,altitude,heading,speed_mps\n' +
        `${BASE},53.5,9.9,10,90,10\n${BASE + 60},53.501,9.901,,,\n${BASE + 120},53.502,9.902,12.5,,0\n${BASE + 180},53.503,9.903,,0,\n`;
      await importInto(source, 'csv', csv);
      const file = await api.get('/v1/gps/export', { query: { device_id: source, format } }).expect(200);
      const target = await newDevice(`target ${format}`);
      await importInto(target, format, file.text);
      // KML has no element for speed or course: time, position and altitude come back.
      const columns = format === 'kml' ? 4 : 6;
      expect(await pointsOf(target, columns)).toEqual(await pointsOf(source, columns));
    },
  );
});
