import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

// The stations of a PEGELONLINE REST API v2 answer (docs/gps.md, "Water levels"), kept in the repository so a clean checkout tests alone.
const FIXTURE = join(import.meta.dirname, '..', 'fixtures', 'water-level', 'stations.json');

export interface FakeWaterLevelApi {
  /** Base URL, as WATER_LEVEL_API_URL takes it (…/webservices/rest-api/v2). */
  url: string;
  /** Query strings of the requests received. */
  requests: URLSearchParams[];
  /** While true, every request answers 500. */
  failing: boolean;
  close(): Promise<void>;
}

/**
 * A local PEGELONLINE REST API v2 stand-in serving the shared fixture:
 * GET …/stations.json, filtered by `waters=` (comma-separated shortnames) as the real API does.
 */
export async function startFakeWaterLevelApi(): Promise<FakeWaterLevelApi> {
  const stations = JSON.parse(readFileSync(FIXTURE, 'utf8')) as { water: { shortname: string } }[];
  const fake: FakeWaterLevelApi = { url: '', requests: [], failing: false, close: async () => {} };
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    fake.requests.push(url.searchParams);
    if (fake.failing) {
      response.statusCode = 500;
      return response.end('upstream broke');
    }
    if (url.pathname !== '/webservices/rest-api/v2/stations.json') {
      response.statusCode = 404;
      return response.end();
    }
    const waters = url.searchParams.get('waters')?.split(',');
    const body = waters ? stations.filter((station) => waters.includes(station.water.shortname)) : stations;
    response.setHeader('content-type', 'application/json');
    response.end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webservices/rest-api/v2`;
  fake.close = () => new Promise((resolve) => server.close(() => resolve()));
  return fake;
}
