import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, buildTestApp, login, onEveryNode, TEST_ADMIN, type TestApp } from '../../../test/helpers.js';

const fixture = (name: string) => readFileSync(new URL(`../../../test/fixtures/gps-files/${name}`, import.meta.url));

/** Files as other apps write them (issue 41: read wrong, or lost). */
describe('GPS file import of files from other apps', () => {
  let t: TestApp;
  let admin: string;
  beforeAll(async () => {
    t = await buildTestApp();
    admin = await login(t.app, 'admin', TEST_ADMIN.password);
  });
  afterAll(() => t.close());

  const newDevice = async () => (await t.app.inject({ method: 'POST', url: '/v1/devices', headers: bearer(admin), payload: { name: 'formats' } })).json().data.id as string;
  async function imported(device: string, body: string | Buffer, query = '') {
    const response = await t.app.inject({ method: 'POST', url: `/v1/gps/import?device_id=${device}${query}`, headers: bearer(admin), payload: body });
    expect(response.statusCode, response.body).toBe(202);
    await onEveryNode(t, (services) => services.gpsFiles.idle());
    return (await t.app.inject({ method: 'GET', url: `/v1/gps/imports/${response.json().data.id}`, headers: bearer(admin) })).json().data;
  }
  /** time, latitude, longitude, altitude, heading, speed (km/h) of each point, from our CSV export. */
  async function pointsOf(device: string) {
    const csv = (await t.app.inject({ method: 'GET', url: `/v1/gps/export?device_id=${device}&format=csv`, headers: bearer(admin) })).body;
    return csv.split('\r\n').slice(1, -1).map((line) => line.split(',').slice(0, 6).join(','));
  }

  it('reads every geometry of a KML MultiGeometry, and TimeSpans as a stay or a move from begin to end', async () => {
    const device = await newDevice();
    expect(await imported(device, fixture('multigeometry.kml'))).toMatchObject({
      // The stay at home ends where and when the drive begins: one point, the second a duplicate.
      format: 'kml', status: 'done', imported: 6, duplicates: 1, refused_count: 1, notes_count: 1,
      refused: [{ at: 'Placemark 1 (line 4) geometry 4', reason: 'a line or shape without times' }],
      notes: [{ at: 'Placemark 3 (line 14)', note: "2 positions between the TimeSpan's begin and end have no times; left out" }],
    });
    // Three points share a time: the export orders those by id, so compare as sets.
    expect((await pointsOf(device)).sort()).toEqual([
      '2025-03-01T10:00:00.000Z,54.1,10.1,,,',
      '2025-03-01T10:00:00.000Z,54.2,10.2,,,',
      '2025-03-01T10:00:00.000Z,54.3,10.3,2,,',
      '2025-03-01T12:00:00.000Z,54.5,10.5,0,,',
      '2025-03-01T18:00:00.000Z,54.5,10.5,0,,',
      '2025-03-01T18:30:00.000Z,54.7,10.7,0,,',
    ]);
  });

  it('takes a GPX file with blank lines before its XML declaration, and leaves out unreadable extensions with a note', async () => {
    const device = await newDevice();
    expect(await imported(device, fixture('blank-lines-first.gpx'))).toMatchObject({
      format: 'gpx', status: 'done', imported: 1, refused_count: 0, notes_count: 2,
      notes: [{ at: 'trkpt 1 (line 5)', note: 'heading is not a number; left out' }, { at: 'trkpt 1 (line 5)', note: 'speed is not a number; left out' }],
    });
    expect(await pointsOf(device)).toEqual(['2025-03-02T08:00:00.000Z,48.1,11.5,,,']);
  });

  it('recognises OwnTracks Recorder lines whose time, tag and JSON are separated by spaces', async () => {
    const device = await newDevice();
    expect(await imported(device, fixture('owntracks-spaces.rec'))).toMatchObject({ format: 'owntracks', status: 'done', imported: 2, refused_count: 0 });
    expect(await pointsOf(device)).toEqual(['2015-09-07T09:12:10.000Z,47.3769,8.5417,,,36', '2015-09-07T09:13:10.000Z,47.377,8.5418,,,']);
  });

  it('reads decimal commas in semicolon CSV, as spreadsheets in German or French write it', async () => {
    const device = await newDevice();
    expect(await imported(device, fixture('decimal-commas.csv'))).toMatchObject({ format: 'csv', status: 'done', imported: 2, refused_count: 0 });
    expect(await pointsOf(device)).toEqual(['2025-03-03T09:00:00.000Z,50.1109,8.6821,112.5,,36', '2025-03-03T09:01:00.000Z,50.111,8.6822,,,']);
  });

  it('fails an import of a named format that recognises nothing in the file', async () => {
    const device = await newDevice();
    expect(await imported(device, '{"something":"else"}', '&format=takeout')).toMatchObject({
      status: 'failed', imported: 0, refused_count: 0, error: { code: 'nothing_recognised', message: 'Nothing in the file was recognised as takeout' },
    });
    expect(await imported(device, '<kml><Document/></kml>', '&format=kml')).toMatchObject({ status: 'failed', error: { code: 'nothing_recognised' } });
  });
});
