import type { FastifyBaseLogger } from 'fastify';

import type { KeyValueStore } from '../../platform/kv/index.js';
import { fetchStations, type UpstreamStation } from './client.js';
import { WaterLevelErrors } from './errors.js';

const CACHE_TTL_SECS = 60;
const EARTH_RADIUS_KM = 6371.0088;

export interface Position {
  latitude: number;
  longitude: number;
}

export interface Station {
  station_id: string;
  shortname: string;
  longname: string;
  water_shortname: string | null;
  water_longname: string | null;
  latitude: number | null;
  longitude: number | null;
  km: number | null;
  agency: string | null;
  level_cm: number | null;
  trend: number | null;
  distance_km: number | null;
}

/** Great-circle distance (haversine) in kilometres. */
export function distanceKm(a: Position, b: Position): number {
  const rad = (degrees: number) => (degrees * Math.PI) / 180;
  const dLat = rad(b.latitude - a.latitude);
  const dLon = rad(b.longitude - a.longitude);
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(rad(a.latitude)) * Math.cos(rad(b.latitude)) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_RADIUS_KM * Math.asin(Math.min(1, Math.sqrt(h)));
}

function toStation(upstream: UpstreamStation, from: Position | null): Station {
  const level = upstream.timeseries?.find((series) => series.shortname === 'W')?.currentMeasurement;
  const located = typeof upstream.latitude === 'number' && typeof upstream.longitude === 'number';
  return {
    station_id: upstream.uuid,
    shortname: upstream.shortname,
    longname: upstream.longname,
    water_shortname: upstream.water?.shortname ?? null,
    water_longname: upstream.water?.longname ?? null,
    latitude: upstream.latitude ?? null,
    longitude: upstream.longitude ?? null,
    km: upstream.km ?? null,
    agency: upstream.agency ?? null,
    level_cm: level?.value ?? null,
    trend: level?.trend ?? null,
    distance_km:
      from && located
        ? Math.round(distanceKm(from, { latitude: upstream.latitude!, longitude: upstream.longitude! }) * 1000) / 1000
        : null,
  };
}

/**
 * Water-level stations from a PEGELONLINE-compatible service. The upstream
 * answer is cached for a minute per water, so a busy client does not hammer it.
 */
export function createPegelService(deps: {
  baseUrl: string;
  kv: KeyValueStore;
  currentPosition: () => Promise<Position | null>;
  log: FastifyBaseLogger;
}) {
  async function upstream(water?: string): Promise<UpstreamStation[]> {
    const key = `pegel:stations:${water?.toUpperCase() ?? '*'}`;
    const cached = await deps.kv.get(key).catch(() => null);
    if (cached) return JSON.parse(cached) as UpstreamStation[];
    const stations = await fetchStations(deps.baseUrl, water?.toUpperCase());
    await deps.kv
      .set(key, JSON.stringify(stations), CACHE_TTL_SECS)
      .catch((err) => deps.log.warn({ err }, 'pegel cache unavailable'));
    return stations;
  }

  /** The request's latitude/longitude, else the globally latest GPS point. */
  async function referencePosition(given?: Partial<Position>): Promise<Position | null> {
    if (typeof given?.latitude === 'number' && typeof given.longitude === 'number') {
      return { latitude: given.latitude, longitude: given.longitude };
    }
    return deps.currentPosition();
  }

  return {
    async stations(water?: string, given?: Partial<Position>): Promise<Station[]> {
      const from = await referencePosition(given);
      return (await upstream(water)).map((station) => toStation(station, from));
    },

    async nearest(options: { water?: string; radiusKm?: number } & Partial<Position>): Promise<Station> {
      const from = await referencePosition(options);
      if (!from) throw WaterLevelErrors.no_position();
      const candidates = (await upstream(options.water))
        .map((station) => toStation(station, from))
        .filter((station) => station.distance_km !== null)
        .sort((a, b) => a.distance_km! - b.distance_km!);
      const nearest = candidates[0];
      if (!nearest || (options.radiusKm !== undefined && nearest.distance_km! > options.radiusKm)) {
        throw WaterLevelErrors.no_station(
          options.radiusKm !== undefined ? `No station within ${options.radiusKm} km` : 'No station found',
        );
      }
      return nearest;
    },
  };
}

export type PegelService = ReturnType<typeof createPegelService>;
