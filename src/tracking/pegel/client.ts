import { WaterLevelErrors } from './errors.js';

const TIMEOUT_MS = 5000;

/** A station as a PEGELONLINE REST API v2 compatible service describes it (the fields we use). */
export interface UpstreamStation {
  uuid: string;
  shortname: string;
  longname: string;
  km?: number;
  agency?: string;
  latitude?: number;
  longitude?: number;
  water?: { shortname: string; longname: string };
  timeseries?: { shortname: string; currentMeasurement?: { value: number; trend?: number } }[];
}

/** Fetches stations with their current measurements, optionally of one water (shortname). */
export async function fetchStations(baseUrl: string, water?: string): Promise<UpstreamStation[]> {
  const url = new URL(`${baseUrl}/stations.json`);
  url.searchParams.set('includeTimeseries', 'true');
  url.searchParams.set('includeCurrentMeasurement', 'true');
  if (water) url.searchParams.set('waters', water);
  let body: unknown;
  try {
    const response = await fetch(url, {
      signal: AbortSignal.timeout(TIMEOUT_MS),
      headers: { accept: 'application/json' },
    });
    if (!response.ok) throw new Error(`status ${response.status}`);
    body = await response.json();
  } catch {
    throw WaterLevelErrors.upstream_unavailable();
  }
  if (!Array.isArray(body)) throw WaterLevelErrors.upstream_unavailable();
  return body as UpstreamStation[];
}
