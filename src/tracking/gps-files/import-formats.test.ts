import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ZipArchive } from 'archiver';
import type { Client, Options } from '../../../test/client.js';
import { buildTestApp, login, onEveryNode, TEST_ADMIN, type TestApp } from '../../../test/helpers.js';

/** A zip of these files, as a KMZ is. */
async function zipOf(files: Record<string, string>): Promise<Buffer> {
  const zip = new ZipArchive();
  const chunks: Buffer[] = [];
  zip.on('data', (chunk: Buffer) => chunks.push(chunk));
  for (const [name, text] of Object.entries(files)) zip.append(text, { name });
  await zip.finalize();
  return Buffer.concat(chunks);
}

type ImportFormat = NonNullable<NonNullable<Options<'post', '/v1/gps/import'>['query']>['format']>;

const fixture = (name: string) => readFileSync(new URL(`../../../test/fixtures/gps-files/${name}`, import.meta.url));

/** Files as other apps write them (issue 41: read wrong, or lost). */
describe('GPS file import of files from other apps', () => {
  let t: TestApp;
  let api: Client;
  beforeAll(async () => {
    t = await buildTestApp();
    api = t.as(await login(t.app, 'admin', TEST_ADMIN.password));
  });
  afterAll(() => t.close());

  const newDevice = async () => (await api.post('/v1/devices', { name: 'formats' }).expect(201)).body.data.id;
  async function imported(device: string, body: string | Buffer, format?: ImportFormat) {
    const response = await api.post('/v1/gps/import', body, { query: { device_id: device, format } }).expect(202);
    await onEveryNode(t, (services) => services.gpsFiles.idle());
    return (await api.get(`/v1/gps/imports/${response.body.data.id}`).expect(200)).body.data;
  }
  /** time, latitude, longitude, altitude, heading, speed (km/h) of each point, from our CSV export. */
  async function pointsOf(device: string) {
    const csv = (await api.get('/v1/gps/export', { query: { device_id: device, format: 'csv' } })).text;
    return csv
      .split('\r\n')
      .slice(1, -1)
      .map((line) => line.split(',').slice(0, 6).join(','));
  }

  it('reads every geometry of a KML MultiGeometry, and TimeSpans as a stay or a move from begin to end', async () => {
    const device = await newDevice();
    expect(await imported(device, fixture('multigeometry.kml'))).toMatchObject({
      // The stay at home ends where and when the drive begins: one point, the second a duplicate.
      format: 'kml',
      status: 'done',
      imported: 6,
      duplicates: 1,
      refused_count: 1,
      notes_count: 1,
      refused: [{ at: 'Placemark 1 (line 4) geometry 4', reason: 'a line or shape without times' }],
      notes: [
        {
          at: 'Placemark 3 (line 14)',
          note: "2 positions between the TimeSpan's begin and end have no times; left out",
        },
      ],
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
      format: 'gpx',
      status: 'done',
      imported: 1,
      refused_count: 0,
      notes_count: 2,
      notes: [
        { at: 'trkpt 1 (line 5)', note: 'heading is not a number; left out' },
        { at: 'trkpt 1 (line 5)', note: 'speed is not a number; left out' },
      ],
    });
    expect(await pointsOf(device)).toEqual(['2025-03-02T08:00:00.000Z,48.1,11.5,,,']);
  });

  it('recognises OwnTracks Recorder lines whose time, tag and JSON are separated by spaces', async () => {
    const device = await newDevice();
    expect(await imported(device, fixture('owntracks-spaces.rec'))).toMatchObject({
      format: 'owntracks',
      status: 'done',
      imported: 2,
      refused_count: 0,
    });
    expect(await pointsOf(device)).toEqual([
      '2015-09-07T09:12:10.000Z,47.3769,8.5417,,,36',
      '2015-09-07T09:13:10.000Z,47.377,8.5418,,,',
    ]);
  });

  it('reads decimal commas in semicolon CSV, as spreadsheets in German or French write it', async () => {
    const device = await newDevice();
    expect(await imported(device, fixture('decimal-commas.csv'))).toMatchObject({
      format: 'csv',
      status: 'done',
      imported: 2,
      refused_count: 0,
    });
    expect(await pointsOf(device)).toEqual([
      '2025-03-03T09:00:00.000Z,50.1109,8.6821,112.5,,36',
      '2025-03-03T09:01:00.000Z,50.111,8.6822,,,',
    ]);
  });

  it('fails an import of a named format that recognises nothing in the file', async () => {
    const device = await newDevice();
    expect(await imported(device, '{"something":"else"}', 'takeout')).toMatchObject({
      status: 'failed',
      imported: 0,
      refused_count: 0,
      error: { code: 'nothing_recognised', message: 'Nothing in the file was recognised as takeout' },
    });
    expect(await imported(device, '<kml><Document/></kml>', 'kml')).toMatchObject({
      status: 'failed',
      error: { code: 'nothing_recognised' },
    });
  });

  it('reads Google Semantic Location History: visits at both ends, moves with their raw path, waypoints noted', async () => {
    const device = await newDevice();
    expect(await imported(device, fixture('semantic-2019_JANUARY.json'))).toMatchObject({
      // The walk starts where and when the visit ends: one point, the second a duplicate.
      format: 'takeout',
      status: 'done',
      imported: 4,
      duplicates: 1,
      refused_count: 1,
      notes_count: 1,
      refused: [{ at: 'timelineObjects[2]', reason: 'neither a placeVisit nor an activitySegment' }],
      notes: [{ at: 'timelineObjects[1].activitySegment', note: '2 waypoints without times; left out' }],
    });
    expect(await pointsOf(device)).toEqual([
      '2019-01-05T09:00:00.000Z,51.5073509,-0.1277583,,,',
      '2019-01-05T10:30:00.000Z,51.5073509,-0.1277583,,,',
      '2019-01-05T10:35:00.000Z,51.505,-0.12768,,,',
      '2019-01-05T10:45:00.000Z,51.503364,-0.127625,,,',
    ]);
  });

  it('reads the iOS Google Maps export (a top-level array; path points timed as minutes after their start)', async () => {
    const device = await newDevice();
    expect(await imported(device, fixture('ios-timeline.json'))).toMatchObject({
      format: 'takeout',
      status: 'done',
      imported: 5,
      duplicates: 1,
      refused_count: 0,
    });
    expect(await pointsOf(device)).toEqual([
      '2024-03-10T07:00:00.000Z,48.137154,11.576124,,,',
      '2024-03-10T09:00:00.000Z,48.137154,11.576124,,,',
      '2024-03-10T09:10:00.000Z,48.138,11.577,,,',
      '2024-03-10T09:20:00.000Z,48.139,11.578,,,',
      '2024-03-10T09:30:00.000Z,48.14,11.58,,,',
    ]);
  });

  it('reads TCX Trackpoints with their altitude and speed, passing over those without a position', async () => {
    const device = await newDevice();
    expect(await imported(device, fixture('activity.tcx'))).toMatchObject({
      format: 'tcx',
      status: 'done',
      imported: 2,
      refused_count: 0,
      notes_count: 0,
    });
    expect(await pointsOf(device)).toEqual([
      '2024-06-01T07:00:00.000Z,47.6062,-122.3321,56.2,,19.8',
      '2024-06-01T07:01:00.000Z,47.607,-122.333,,,',
    ]);
  });

  it('reads the first KML document of a KMZ; a zip without one, or one that inflates past IMPORT_MAX_BYTES, fails', async () => {
    const device = await newDevice();
    const kmz = await zipOf({ 'images/icon.txt': 'not a picture', 'doc.kml': fixture('points.kml').toString() });
    expect(await imported(device, kmz)).toMatchObject({
      format: 'kmz',
      status: 'done',
      imported: 3,
      refused_count: 1,
      bytes_read: kmz.length,
      bytes_total: kmz.length,
    });
    expect(await pointsOf(device)).toHaveLength(3);
    expect(await imported(device, await zipOf({ 'readme.txt': 'hello' }))).toMatchObject({
      status: 'failed',
      error: { code: 'no_kml', message: 'The KMZ (zip) file holds no .kml document' },
    });
    expect(await imported(device, Buffer.from('PK\u0003\u0004 and then nothing of a zip'))).toMatchObject({
      status: 'failed',
      error: { code: 'malformed_zip' },
    });
    const small = await buildTestApp({ config: { importMaxBytes: 4096 } });
    try {
      const smallApi = small.as(await login(small.app, 'admin', TEST_ADMIN.password));
      const id = (await smallApi.post('/v1/devices', { name: 'x' }).expect(201)).body.data.id;
      const bomb = await zipOf({ 'doc.kml': `<kml>${' '.repeat(100_000)}</kml>` });
      expect(bomb.length).toBeLessThan(4096);
      const started = await smallApi.post('/v1/gps/import', bomb, { query: { device_id: id } }).expect(202);
      await onEveryNode(small, (services) => services.gpsFiles.idle());
      const report = (await smallApi.get(`/v1/gps/imports/${started.body.data.id}`).expect(200)).body.data;
      expect(report).toMatchObject({
        status: 'failed',
        error: {
          code: 'kmz_too_large',
          message: "The KMZ's KML document is larger than IMPORT_MAX_BYTES (4096 bytes)",
        },
      });
    } finally {
      await small.close();
    }
  });
});
