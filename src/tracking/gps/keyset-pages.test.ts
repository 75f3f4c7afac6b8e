import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RequestBody } from '../../../test/client.js';
import { buildTestApp, login, TEST_ADMIN, testConfig } from '../../../test/helpers.js';

const BASE = 'https://gps.example.org';
const POINT = {
  latitude: 53.55,
  longitude: 9.99,
  speed_kmh: 18.52,
  speed_mps: 5.14,
  speed_mph: 11.51,
  speed_knots: 10,
};
// 23 points at 4 times: most of them share their time with others, so only the id orders them. (Each at its
// own position: a point of the same device, time and position is stored once.)
const TIMES = Array.from({ length: 23 }, (_, i) => 1_767_225_600 + (i % 4) * 60);
const at = (i: number) => ({ latitude: POINT.latitude + i / 1000 });

interface Point {
  id: string;
  timestamp: string;
}

/** The cursor the service writes for the page `page` of `list` that ends with `point`: base64url of [list, time ms, id, page]. */
const cursorOf = (list: string, point: Point, page: number) =>
  Buffer.from(JSON.stringify([list, Date.parse(point.timestamp), point.id, page])).toString('base64url');
const raw = (text: string) => Buffer.from(text).toString('base64url');
const byTimeThenId = (a: Point, b: Point) =>
  Date.parse(a.timestamp) - Date.parse(b.timestamp) || (a.id < b.id ? -1 : 1);

async function start() {
  const t = await buildTestApp({
    config: { publicUrl: BASE, rateLimit: { ...testConfig().rateLimit, gpsWrite: 1000 } },
  });
  const api = t.as(await login(t.app, 'admin', TEST_ADMIN.password));
  return {
    t,
    api,
    /** A page by its URL as a next link or a test writes it (a cursor, a bad query): sent as it is. */
    get: (url: string) => api.raw({ method: 'GET', url: url.replace(BASE, '') }),
    /** Sends a point, answering it as stored. */
    point: async (body: RequestBody<'post', '/v1/gps'>) => (await api.post('/v1/gps', body).expect(201)).body.data,
    device: async (name: string) => (await api.post('/v1/devices', { name }).expect(201)).body.data,
    trip: async (body: RequestBody<'post', '/v1/trips'>) => (await api.post('/v1/trips', body).expect(201)).body.data,
  };
}

type Get = Awaited<ReturnType<typeof start>>['get'];

/** Follows next links from `url`: every page's status, pagination and data, in order. */
async function walk(get: Get, url: string) {
  const pages = [];
  for (let next: string | undefined = url; next;) {
    const response = await get(next);
    const body = response.body;
    pages.push({
      status: response.status,
      pagination: body.pagination,
      data: body.data as Point[],
      links: body._links,
    });
    next = body._links.next;
  }
  return pages;
}

describe('GET /v1/gps: numbered and keyset pages', () => {
  let app: Awaited<ReturnType<typeof start>>;
  /** Every point, as the list orders them: newest first, ties by id descending. */
  let points: Point[];
  beforeAll(async () => {
    app = await start();
    const sent = [];
    for (const [i, timestamp] of TIMES.entries()) sent.push(await app.point({ ...POINT, ...at(i), timestamp }));
    points = (sent as Point[]).sort(byTimeThenId).reverse();
  });
  afterAll(() => app.t.close());

  it('following next links reads every point once, in order, and every link after page 1 carries a cursor', async () => {
    const pages = await walk(app.get, '/v1/gps?limit=5');
    expect(pages.map((page) => [page.status, page.pagination])).toEqual(
      [1, 2, 3, 4, 5].map((page) => [200, { page, limit: 5, total: 23, total_pages: 5 }]),
    );
    expect(pages.flatMap((page) => page.data)).toEqual(points);
    expect(pages.map((page) => page.links.next)).toEqual([
      ...[1, 2, 3, 4].map((page) => `${BASE}/v1/gps?limit=5&after=${cursorOf('gps', points[page * 5 - 1]!, page)}`),
      undefined,
    ]);
  });

  it('answers a cursor page with numbered first, prev and last links and a self link to itself', async () => {
    const after = cursorOf('gps', points[9]!, 2);
    const response = await app.get(`/v1/gps?limit=5&after=${after}`);
    expect(response.status).toBe(200);
    expect(response.headers['x-total-count-estimated']).toBeUndefined();
    expect(response.body).toEqual({
      data: points.slice(10, 15),
      pagination: { page: 3, limit: 5, total: 23, total_pages: 5 },
      _links: {
        self: `${BASE}/v1/gps?limit=5&after=${after}`,
        first: `${BASE}/v1/gps?limit=5&page=1`,
        prev: `${BASE}/v1/gps?limit=5&page=2`,
        next: `${BASE}/v1/gps?limit=5&after=${cursorOf('gps', points[14]!, 3)}`,
        last: `${BASE}/v1/gps?limit=5&page=5`,
      },
    });
    // The same page by number: the same points.
    expect((await app.get('/v1/gps?page=3&limit=5')).body.data).toEqual(points.slice(10, 15));
  });

  it('keeps numbered pages as they were, with a cursor in next', async () => {
    const response = await app.get('/v1/gps?page=5&limit=5');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      data: points.slice(20),
      pagination: { page: 5, limit: 5, total: 23, total_pages: 5 },
      _links: {
        self: `${BASE}/v1/gps?page=5&limit=5`,
        first: `${BASE}/v1/gps?page=1&limit=5`,
        prev: `${BASE}/v1/gps?page=4&limit=5`,
        last: `${BASE}/v1/gps?page=5&limit=5`,
      },
    });
    const first = (await app.get('/v1/gps')).body;
    expect(first.pagination).toEqual({ page: 1, limit: 10, total: 23, total_pages: 3 });
    expect(first._links.next).toBe(`${BASE}/v1/gps?limit=10&after=${cursorOf('gps', points[9]!, 1)}`);
  });

  it('answers the page after the last point empty, without next', async () => {
    const after = cursorOf('gps', points[22]!, 5);
    const response = await app.get(`/v1/gps?limit=5&after=${after}`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      data: [],
      pagination: { page: 6, limit: 5, total: 23, total_pages: 5 },
      _links: {
        self: `${BASE}/v1/gps?limit=5&after=${after}`,
        first: `${BASE}/v1/gps?limit=5&page=1`,
        prev: `${BASE}/v1/gps?limit=5&page=5`,
        last: `${BASE}/v1/gps?limit=5&page=5`,
      },
    });
  });

  it.each([
    [
      'page with after',
      `page=2&after=${cursorOf('gps', { id: '00000000-0000-4000-8000-000000000000', timestamp: '2026-01-01T00:00:00Z' }, 1)}`,
      "Query parameter 'after' cannot be combined with 'page'",
    ],
    [
      'a cursor that is not base64url',
      'after=not%20a%20cursor',
      "Query parameter 'after' is not a valid cursor; take it from a page's next link",
    ],
    [
      'a cursor that is not JSON',
      `after=${Buffer.from('[1,').toString('base64url')}`,
      "Query parameter 'after' is not a valid cursor; take it from a page's next link",
    ],
    [
      'a cursor without a UUID',
      `after=${raw('["gps",0,"x",1]')}`,
      "Query parameter 'after' is not a valid cursor; take it from a page's next link",
    ],
    [
      'a cursor of page 0',
      `after=${raw('["gps",0,"00000000-0000-4000-8000-000000000000",0]')}`,
      "Query parameter 'after' is not a valid cursor; take it from a page's next link",
    ],
    [
      'a cursor of a negative time',
      `after=${raw('["gps",-1,"00000000-0000-4000-8000-000000000000",1]')}`,
      "Query parameter 'after' is not a valid cursor; take it from a page's next link",
    ],
    [
      'a cursor of the old shape, without its list',
      `after=${raw('[0,"00000000-0000-4000-8000-000000000000",1]')}`,
      "Query parameter 'after' is not a valid cursor; take it from a page's next link",
    ],
    [
      "a cursor of a trip's points",
      `after=${raw('["trip:00000000-0000-4000-8000-000000000000",0,"00000000-0000-4000-8000-000000000000",1]')}`,
      "Query parameter 'after' is not a valid cursor; take it from a page's next link",
    ],
    ['an empty cursor', 'after=', "Query parameter 'after' must NOT have fewer than 1 characters"],
  ])('refuses %s with 400 naming the field', async (_, query, message) => {
    const response = await app.get(`/v1/gps?${query}`);
    expect({ status: response.status, body: response.body }).toEqual({
      status: 400,
      body: { error: 'BadRequest', message, code: 'request.validation' },
    });
  });
});

describe('GET /v1/trips/{id}/gps: numbered and keyset pages', () => {
  let app: Awaited<ReturnType<typeof start>>;
  beforeAll(async () => {
    app = await start();
  });
  afterAll(() => app.t.close());

  it('following next links reads every point of the trip once, oldest first, also when a late point arrives meanwhile', async () => {
    const device = await app.device('tracker');
    const trip = await app.trip({
      name: 'Kiel to Fehmarn',
      device_id: device.id,
      gps_logging_enabled: true,
    });
    await app.api.patch(`/v1/trips/${trip.id}`, { status: 'active' }).expect(200);
    const sent: Point[] = [];
    for (const [i, timestamp] of TIMES.entries())
      sent.push(await app.point({ ...POINT, ...at(i), timestamp, device_id: device.id }));
    const points = sent.sort(byTimeThenId);

    const first = await app.get(`/v1/trips/${trip.id}/gps?limit=6`);
    expect(first.body.pagination).toEqual({ page: 1, limit: 6, total: 23, total_pages: 4 });
    expect(first.body.data).toEqual(points.slice(0, 6));
    // A late point older than all: an offset would now show page 1's last point again on page 2.
    const late = await app.point({ ...POINT, timestamp: TIMES[0]! - 3600, device_id: device.id });
    const rest = await walk(app.get, first.body._links.next);
    expect(rest.map((page) => [page.status, page.pagination])).toEqual(
      [2, 3, 4].map((page) => [200, { page, limit: 6, total: 24, total_pages: 4 }]),
    );
    expect(rest.flatMap((page) => page.data)).toEqual(points.slice(6));
    expect(rest.map((page) => page.links.next)).toEqual([
      `${BASE}/v1/trips/${trip.id}/gps?limit=6&after=${cursorOf(`trip:${trip.id}`, points[11]!, 2)}`,
      `${BASE}/v1/trips/${trip.id}/gps?limit=6&after=${cursorOf(`trip:${trip.id}`, points[17]!, 3)}`,
      undefined,
    ]);
    // Numbered, the late point comes first.
    expect((await app.get(`/v1/trips/${trip.id}/gps?page=1&limit=1`)).body.data).toEqual([late]);
  });

  it("pages 10 points by default and at most 100 (the spec's trip GPS limits)", async () => {
    const device = await app.device('limits tracker');
    const trip = await app.trip({ name: 'Eckernfoerde', device_id: device.id });
    const plain = await app.get(`/v1/trips/${trip.id}/gps`);
    expect(plain.body.pagination).toEqual({ page: 1, limit: 10, total: 0, total_pages: 1 });
    const tooMany = await app.get(`/v1/trips/${trip.id}/gps?limit=101`);
    expect({ status: tooMany.status, body: tooMany.body }).toEqual({
      status: 400,
      body: { error: 'BadRequest', message: "Query parameter 'limit' must be <= 100", code: 'request.validation' },
    });
  });

  it('takes a cursor however the URL spells the trip id (UUIDs are case-insensitive)', async () => {
    const device = await app.device('case tracker');
    const trip = await app.trip({
      name: 'Heiligenhafen',
      device_id: device.id,
      gps_logging_enabled: true,
    });
    await app.api.patch(`/v1/trips/${trip.id}`, { status: 'active' }).expect(200);
    for (const timestamp of TIMES.slice(0, 3)) await app.point({ ...POINT, timestamp, device_id: device.id });
    const first = (await app.get(`/v1/trips/${trip.id.toUpperCase()}/gps?limit=2`)).body;
    const after = new URL(first._links.next).searchParams.get('after')!;
    const second = await app.get(`/v1/trips/${trip.id}/gps?limit=2&after=${after}`);
    expect(second.status).toBe(200);
    expect(second.body.data).toHaveLength(1);
  });

  it('refuses a cursor of another trip or of GET /v1/gps with 400 naming after', async () => {
    const device = await app.device('second tracker');
    const trip = await app.trip({ name: 'Laboe', device_id: device.id });
    const point = { id: '00000000-0000-4000-8000-000000000000', timestamp: '2026-01-01T00:00:00Z' };
    for (const list of ['trip:00000000-0000-4000-8000-000000000001', 'gps']) {
      const response = await app.get(`/v1/trips/${trip.id}/gps?after=${cursorOf(list, point, 1)}`);
      expect({ status: response.status, body: response.body }).toEqual({
        status: 400,
        body: {
          error: 'BadRequest',
          message: "Query parameter 'after' is not a valid cursor; take it from a page's next link",
          code: 'request.validation',
        },
      });
    }
  });

  it('answers 404 for an unknown trip and 400 for page with after', async () => {
    const unknownTrip = '00000000-0000-4000-8000-000000000001';
    const after = cursorOf(
      `trip:${unknownTrip}`,
      { id: '00000000-0000-4000-8000-000000000000', timestamp: '2026-01-01T00:00:00Z' },
      1,
    );
    const unknown = await app.get(`/v1/trips/${unknownTrip}/gps?after=${after}`);
    expect({ status: unknown.status, body: unknown.body }).toEqual({
      status: 404,
      body: { error: 'NotFound', message: 'Trip not found', code: 'trip.not_found' },
    });
    const both = await app.get(`/v1/trips/00000000-0000-4000-8000-000000000001/gps?page=1&after=${after}`);
    expect({ status: both.status, body: both.body }).toEqual({
      status: 400,
      body: {
        error: 'BadRequest',
        message: "Query parameter 'after' cannot be combined with 'page'",
        code: 'request.validation',
      },
    });
  });
});

describe('GET /v1/gps: totals of a large table', () => {
  let app: Awaited<ReturnType<typeof start>>;
  beforeAll(async () => {
    app = await start();
  });
  afterAll(() => app.t.close());

  /** `n` more points, straight into the table (through HTTP this would take minutes), and fresh statistics. */
  let loaded = 0;
  async function load(n: number) {
    await sql`insert into gps_points (latitude, longitude, "timestamp", speed_kmh, speed_mps, speed_mph, speed_knots)
      select 53.5, 9.9, to_timestamp(1700000000 + ${loaded} + i), 0, 0, 0, 0 from generate_series(1, ${n}) i`.execute(
      app.t.database.db,
    );
    loaded += n;
    await sql`analyze gps_points`.execute(app.t.database.db);
  }

  it('counts up to 10,000 points, and beyond answers the estimate with X-Total-Count-Estimated', async () => {
    for (const timestamp of TIMES.slice(0, 3)) await app.point({ ...POINT, timestamp });
    const small = await app.get('/v1/gps?limit=2');
    expect([small.status, small.headers['x-total-count-estimated'], small.body.pagination]).toEqual([
      200,
      undefined,
      { page: 1, limit: 2, total: 3, total_pages: 2 },
    ]);

    // Counted up to 10,001, then estimated.
    await load(12_000);
    const counted = await app.get('/v1/gps?limit=100');
    // The estimate of a partitioned table (by month, migration 0035) counts at least one row per empty partition.
    const aboutRows = (n: number) => expect.toSatisfy((total: number) => total >= n && total <= n + 20);
    expect([counted.status, counted.headers['x-total-count-estimated'], counted.body.pagination]).toEqual([
      200,
      'true',
      { page: 1, limit: 100, total: aboutRows(12_003), total_pages: 121 },
    ]);

    // Far beyond: estimated without counting.
    await load(20_000);
    const estimated = await app.get('/v1/gps?limit=100&page=2');
    expect([estimated.status, estimated.headers['x-total-count-estimated'], estimated.body.pagination]).toEqual([
      200,
      'true',
      { page: 2, limit: 100, total: aboutRows(32_003), total_pages: 321 },
    ]);
    expect(estimated.body.data).toHaveLength(100);
  });
});

describe('gps_points', () => {
  it('refuses a time finer than a millisecond, which a cursor could not carry', async () => {
    const { t } = await start();
    try {
      const insert = (time: string) =>
        sql`insert into gps_points (latitude, longitude, "timestamp", speed_kmh, speed_mps, speed_mph, speed_knots)
          values (53.5, 9.9, ${time}::timestamptz, 0, 0, 0, 0)`.execute(t.database.db);
      await expect(insert('2026-01-01T00:00:00.123Z')).resolves.toBeDefined();
      await expect(insert('2026-01-01T00:00:00.123456Z')).rejects.toThrow(/gps_points_time_in_milliseconds/);
    } finally {
      await t.close();
    }
  });
});
