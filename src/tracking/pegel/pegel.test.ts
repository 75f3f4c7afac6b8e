import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '../../../test/client.js';
import { startFakeWaterLevelApi, type FakeWaterLevelApi } from '../../../test/fakes/water-level.js';
import { buildTestApp, expectPermissionChecks, login, TEST_ADMIN, type TestApp } from '../../../test/helpers.js';
import { distanceKm } from './service.js';

const BONN = { latitude: 50.737167, longitude: 7.10675 };

describe('great-circle distance', () => {
  it('matches known distances', () => {
    expect(distanceKm(BONN, BONN)).toBe(0);
    // Bonn to Hamburg St. Pauli by the spherical law of cosines: 368.32 km.
    expect(distanceKm(BONN, { latitude: 53.545742, longitude: 9.970116 })).toBeCloseTo(368.32, 1);
    expect(distanceKm({ latitude: 0, longitude: 0 }, { latitude: 0, longitude: 180 })).toBeCloseTo(20015.1, 0);
  });
});

describe('water levels', () => {
  let upstream: FakeWaterLevelApi;
  let t: TestApp;
  let admin: string;
  let api: Client;
  beforeAll(async () => {
    upstream = await startFakeWaterLevelApi();
    t = await buildTestApp({ config: { waterLevelApiUrl: upstream.url } });
    admin = await login(t.app, 'admin', TEST_ADMIN.password);
    api = t.as(admin);
  });
  afterAll(async () => {
    await t.close();
    await upstream.close();
  });

  // The water-level routes are not in the OpenAPI document.
  const get = (url: string) => api.raw({ method: 'GET', url });

  it('lists the stations of a water with their current level', async () => {
    const response = await get('/v1/pegel/stations?water=ELBE&latitude=53.55&longitude=9.99');
    expect(response.status).toBe(200);
    const stations = response.body;
    expect(stations.map((s: { shortname: string }) => s.shortname)).toEqual([
      'DRESDEN',
      'MAGDEBURG-STROMBRÜCKE',
      'HAMBURG ST. PAULI',
    ]);
    expect(stations[2]).toEqual({
      station_id: expect.any(String),
      shortname: 'HAMBURG ST. PAULI',
      longname: expect.any(String),
      water_shortname: 'ELBE',
      water_longname: expect.any(String),
      latitude: 53.545742,
      longitude: 9.970116,
      km: expect.any(Number),
      agency: expect.any(String),
      level_cm: 512,
      trend: expect.any(Number),
      distance_km: expect.any(Number),
    });
    expect(stations[2].distance_km).toBeLessThan(2);
    // The list may come from the cache another test of this app filled; some request asked for it.
    const elbe = upstream.requests.filter((query) => query.get('waters') === 'ELBE');
    expect(elbe.length).toBeGreaterThan(0);
    expect(elbe.every((query) => query.get('includeCurrentMeasurement') === 'true')).toBe(true);
  });

  it('finds the nearest station to given coordinates, with its distance', async () => {
    const response = await get('/v1/pegel/nearest?latitude=50.74&longitude=7.1');
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ shortname: 'BONN', water_shortname: 'RHEIN', level_cm: 212 });
    expect(response.body.distance_km).toBeLessThan(1);
  });

  it('searches from the latest GPS point when no coordinates are given', async () => {
    const none = await get('/v1/pegel/nearest');
    expect(none.status).toBe(404);
    await api
      .post('/v1/gps', {
        latitude: 51.0,
        longitude: 13.7,
        timestamp: 1_800_000_000,
        speed_kmh: 0,
        speed_mps: 0,
        speed_mph: 0,
        speed_knots: 0,
      })
      .expect(201);
    expect((await get('/v1/pegel/nearest')).body.shortname).toBe('DRESDEN');
    expect((await get('/v1/pegel/nearest?water=MOSEL')).body.shortname).toBe('KOBLENZ UP');
  });

  it('answers 404 when no station lies within the radius', async () => {
    const response = await get('/v1/pegel/nearest?latitude=54.32&longitude=10.14&radius=50');
    expect(response.status).toBe(404);
    expect(response.body).toEqual({
      error: 'NotFound',
      message: 'No station within 50 km',
      code: 'water_level.no_station',
    });
    expect((await get('/v1/pegel/nearest?latitude=54.32&longitude=10.14&radius=100')).body.shortname).toBe(
      'HAMBURG ST. PAULI',
    );
    expect((await get('/v1/pegel/nearest?radius=0')).status).toBe(400);
  });

  it('caches the upstream answer briefly, and answers 503 when the upstream fails', async () => {
    const before = upstream.requests.length;
    await get('/v1/pegel/stations?water=RHEIN');
    await get('/v1/pegel/stations?water=RHEIN');
    expect(upstream.requests.length - before).toBeLessThanOrEqual(1);
    upstream.failing = true;
    try {
      const response = await get('/v1/pegel/stations?water=DONAU');
      expect(response.status).toBe(503);
      expect(response.body).toEqual({
        error: 'ServiceUnavailable',
        message: 'The water-level service is unavailable; try again shortly',
        code: 'water_level.upstream_unavailable',
      });
    } finally {
      upstream.failing = false;
    }
  });

  it('needs pegel:read', async () => {
    expect((await t.as(null).raw({ method: 'GET', url: '/v1/pegel/stations' })).status).toBe(401);
    await expectPermissionChecks(t.app, admin, [
      { method: 'GET', url: '/v1/pegel/stations?water=ELBE', permission: 'pegel:read' },
      { method: 'GET', url: '/v1/pegel/nearest?latitude=53.5&longitude=10', permission: 'pegel:read' },
      // A key with every other permission of the area is refused: here, one that may only read GPS.
      { method: 'GET', url: '/v1/gps/current', permission: 'gps:read' },
    ]);
  });
});

describe('water levels without WATER_LEVEL_API_URL', () => {
  it('answers 404 on /v1/pegel/*', async () => {
    const t = await buildTestApp();
    try {
      const admin = await login(t.app, 'admin', TEST_ADMIN.password);
      for (const url of ['/v1/pegel/stations', '/v1/pegel/nearest']) {
        const response = await t.as(admin).raw({ method: 'GET', url });
        expect(response.status).toBe(404);
        expect(response.body.error).toBe('NotFound');
      }
    } finally {
      await t.close();
    }
  });
});
