import { mkdirSync, readdirSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Options } from '../../../test/client.js';
import {
  buildTestApp,
  createUser,
  login,
  onEveryNode,
  TEST_ADMIN,
  type TestApp,
  twoNodes,
} from '../../../test/helpers.js';
import { numberOf, timeOf } from './parsers/validate.js';
import { latLngOf } from './parsers/google.js';

const MB = 1024 * 1024;

type ImportQuery = NonNullable<Options<'post', '/v1/gps/import'>['query']>;
type ImportFormat = NonNullable<ImportQuery['format']>;

/** `total` bytes of a file made as it is read: head, then `piece` repeated, then tail (never held whole). */
function generated(head: string, piece: string, total: number, tail = ''): Readable {
  const chunk = piece.repeat(Math.max(1, Math.floor((64 * 1024) / piece.length)));
  let sent = 0;
  return Readable.from(
    (function* () {
      yield head;
      for (; sent < total; sent += chunk.length) yield chunk;
      yield tail;
    })(),
    { objectMode: false },
  );
}

describe('GPS file import of hostile files', () => {
  let t: TestApp;
  let admin: string;
  beforeAll(async () => {
    t = await buildTestApp();
    admin = await login(t.app, 'admin', TEST_ADMIN.password);
  });
  afterAll(() => t.close());

  const newDevice = async (token = admin) =>
    (await t.as(token).post('/v1/devices', { name: 'hostile' }).expect(201)).body.data.id;
  /** The body streams in as it is read when it is a stream. */
  const post = (query: ImportQuery, body: string | Readable, token = admin) =>
    t.as(token).post('/v1/gps/import', body, { query, headers: { 'content-type': 'application/octet-stream' } });
  const report = async (id: string) => (await t.as(admin).get(`/v1/gps/imports/${id}`).expect(200)).body.data;
  async function imported(query: ImportQuery, body: string | Readable) {
    const response = await post(query, body).expect(202);
    await onEveryNode(t, (services) => services.gpsFiles.idle());
    return report(response.body.data.id);
  }

  it('reads a megabyte of digits, spaces or signs as "not a number" at once (no pattern backtracks on it)', () => {
    const values = [
      '1'.repeat(MB) + 'x',
      `1${' '.repeat(MB)}x`,
      '-'.repeat(MB),
      `${'1.'.repeat(MB / 2)}`,
      ` ${' '.repeat(MB)}1,2`,
    ];
    const started = performance.now();
    for (const value of values) {
      expect(numberOf(value)).toBeUndefined();
      expect(timeOf(value)).toBeUndefined();
      expect(latLngOf(value)).toBeUndefined();
    }
    // Quadratic matching of one such value took minutes; linear work on all of them is a few milliseconds.
    expect(performance.now() - started).toBeLessThan(1000);
    expect(numberOf(' -12.5e1 ')).toBe(-125);
    expect(latLngOf(' geo: 52.5163 , 13.3777° ')).toEqual({ latitude: '52.5163', longitude: '13.3777' });
  });

  it('refuses long values in GPX, CSV and Timeline files point by point, the file read in well under a second a megabyte', async () => {
    const device = await newDevice();
    const digits = '1'.repeat(60_000);
    const started = performance.now();
    const gpx = await imported(
      { device_id: device, format: 'gpx' },
      `<gpx><trk><trkseg><trkpt lat="${digits}x" lon="1"><time>2025-01-01T00:00:00Z</time></trkpt>` +
        `<trkpt lat="1" lon="1"><ele>1${' '.repeat(MB)}x</ele><time>2025-01-01T00:00:01Z</time></trkpt></trkseg></trk></gpx>`,
    );
    expect(gpx).toMatchObject({
      status: 'done',
      imported: 1,
      refused: [{ at: 'trkpt 1 (line 1)', reason: 'latitude is not a number' }],
      notes: [{ at: 'trkpt 2 (line 1)', note: 'altitude is not a number; left out' }],
    });
    const csv = await imported(
      { device_id: device, format: 'csv' },
      `time,lat,lon\n2025-01-01T00:00:00Z,${digits}x,1\n2025-01-01T00:00:00Z,1,1${' '.repeat(60_000)}x\n`,
    );
    expect(csv).toMatchObject({
      status: 'done',
      imported: 0,
      refused: [
        { at: 'line 2', reason: 'latitude is not a number' },
        { at: 'line 3', reason: 'longitude is not a number' },
      ],
    });
    const timeline = await imported(
      { device_id: device, format: 'takeout' },
      JSON.stringify({
        semanticSegments: [
          {
            startTime: '2025-01-01T00:00:00Z',
            timelinePath: [{ point: `${' '.repeat(MB)}1,2x`, time: '2025-01-01T00:00:00Z' }],
          },
        ],
      }),
    );
    expect(timeline).toMatchObject({
      status: 'done',
      imported: 0,
      refused: [{ at: 'semanticSegments[0].timelinePath[0]', reason: 'no position ("lat°, lng°")' }],
    });
    // Before: 73 s for 100 KB of GPX. The bound is loose on purpose (a loaded CI machine); quadratic work is minutes.
    expect(performance.now() - started).toBeLessThan(10_000);
  });

  /** Imports a hostile file of 64 MB, sampling this process's memory meanwhile; answers the report and the largest growth. */
  async function importWatchingMemory(format: ImportFormat, body: Readable) {
    const device = await newDevice();
    globalThis.gc?.();
    const before = process.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
    try {
      const done = await imported({ device_id: device, format }, body);
      return { done, growth: (peak - before) / MB };
    } finally {
      clearInterval(sampler);
    }
  }

  it.each<[ImportFormat, string, () => Readable, string, string]>([
    [
      'gpx',
      'nested elements',
      () => generated('<gpx>', '<a>', 64 * MB),
      'too_deep',
      'XML nested deeper than 64 elements',
    ],
    [
      'gpx',
      'one text node',
      () => generated('<gpx><trk><trkseg><trkpt lat="1" lon="1"><ele>', '1', 64 * MB),
      'element_too_large',
      "An XML element's text, tag or comment is longer than 4194304 characters",
    ],
    [
      'kml',
      'a comment full of markup',
      () => generated('<kml><!--', '<a>b</a>', 64 * MB),
      'element_too_large',
      "An XML element's text, tag or comment is longer than 4194304 characters",
    ],
    [
      'gpx',
      'one tag of attributes',
      () => generated('<gpx><wpt ', 'a1="x" ', 64 * MB),
      'element_too_large',
      "An XML element's text, tag or comment is longer than 4194304 characters",
    ],
    [
      'geojson',
      'a single feature',
      () =>
        generated(
          '{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"LineString","coordinates":[',
          '[13.4,52.5],',
          64 * MB,
        ),
      'entry_too_large',
      'More than 1048576 characters of JSON without the end of an entry (a Feature, location or segment)',
    ],
    [
      'takeout',
      'a member outside the entries',
      () => generated('{"metadata":[', '1,', 64 * MB),
      'entry_too_large',
      'More than 1048576 characters of JSON without the end of an entry (a Feature, location or segment)',
    ],
  ])(
    'fails a %s file of %s (64 MB) with a report naming the limit, growing the memory by less than 100 MB',
    async (format, _shape, body, code, message) => {
      const { done, growth } = await importWatchingMemory(format, body());
      expect(done).toMatchObject({ status: 'failed', imported: 0, error: { code, message } });
      expect(growth).toBeLessThan(100);
    },
  );

  it('removes the spooled uploads of a process that is gone when a node starts', async () => {
    // Past Linux's largest process id: no process has it.
    const dead = join(tmpdir(), 'waygate-import-4194999-test');
    mkdirSync(dead, { recursive: true });
    writeFileSync(join(dead, 'upload'), 'left behind by a crash');
    const other = await buildTestApp();
    try {
      for (let i = 0; i < 100 && existsSync(dead); i++) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(existsSync(dead)).toBe(false);
      expect(readdirSync(tmpdir()).filter((name) => name.startsWith(`waygate-import-${process.pid}-`))).toEqual([]);
    } finally {
      await other.close();
    }
  });

  // Places are counted per node (docs/gps.md): on two nodes the third upload may reach the other one.
  it.skipIf(twoNodes)(
    'answers 429 past IMPORT_MAX_PER_USER uploads at once, and takes the next once one has ended',
    async () => {
      const user = await createUser(t.app, ['role_admin']);
      const token = await login(t.app, user.username, user.password);
      const device = await newDevice(token);
      const held = [new PassThrough(), new PassThrough()];
      const csv = { device_id: device, format: 'csv' } as const;
      const pending = held.map((stream) => post(csv, stream, token));
      for (const stream of held) stream.write('time,lat,lon\n');
      await new Promise((resolve) => setTimeout(resolve, 50));
      const third = await post(csv, 'time,lat,lon\n2025-01-01T00:00:00Z,1,1\n', token);
      expect(third.status).toBe(429);
      expect(third.headers['retry-after']).toBe('30');
      expect(third.body).toEqual({
        error: 'TooManyRequests',
        message: 'You have 2 imports running; wait for one to end (at most 2 at once)',
        code: 'gps_file.too_many_imports',
      });
      // Another user is not held up by this one.
      expect((await post(csv, 'time,lat,lon\n2025-01-01T00:00:00Z,1,1\n')).status).toBe(202);
      for (const stream of held) stream.end('2025-01-01T00:00:00Z,1,1\n');
      expect((await Promise.all(pending)).map((response) => response.status)).toEqual([202, 202]);
      await onEveryNode(t, (services) => services.gpsFiles.idle());
      expect((await post(csv, 'time,lat,lon\n2025-01-01T00:00:01Z,1,1\n', token)).status).toBe(202);
      await onEveryNode(t, (services) => services.gpsFiles.idle());
    },
  );
});

describe('GPS file import: slow uploads and the spool', () => {
  it('cuts off an upload slower than IMPORT_MIN_BYTES_PER_SECOND (408) and one that would overfill the spool (503), removing both files', async () => {
    const t = await buildTestApp({
      config: { importRateWindowMs: 100, importMinBytesPerSecond: 1000, importSpoolMaxBytes: 4096 },
    });
    try {
      const api = t.as(await login(t.app, 'admin', TEST_ADMIN.password));
      const device = (await api.post('/v1/devices', { name: 'slow' }).expect(201)).body.data.id;
      const post = (payload: string | Readable) =>
        api.post('/v1/gps/import', payload, { query: { device_id: device, format: 'csv' } });
      const stalled = new PassThrough();
      stalled.write('time,lat,lon\n');
      const slow = await post(stalled);
      expect(slow.status).toBe(408);
      expect(slow.body).toEqual({
        error: 'RequestTimeout',
        message: 'The upload sent less than IMPORT_MIN_BYTES_PER_SECOND over IMPORT_RATE_WINDOW_SECS and was cut off',
        code: 'gps_file.upload_too_slow',
      });
      const full = await post(`time,lat,lon\n${'2025-01-01T00:00:00Z,1,1\n'.repeat(200)}`);
      expect(full.status).toBe(503);
      expect(full.headers['retry-after']).toBe('30');
      expect(full.body).toMatchObject({ code: 'gps_file.spool_full' });
      expect(readdirSync(tmpdir()).filter((name) => name.startsWith(`waygate-import-${process.pid}-`))).toEqual([]);
      // Within the spool's room, an import goes through.
      expect((await post('time,lat,lon\n2025-01-01T00:00:00Z,1,1\n')).status).toBe(202);
      await onEveryNode(t, (services) => services.gpsFiles.idle());
    } finally {
      await t.close();
    }
  });
});
