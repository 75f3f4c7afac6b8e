import type { Clock } from '../../platform/clock.js';
import type { FastifyBaseLogger } from 'fastify';
import type { KeyValueStore } from '../../platform/kv/index.js';

const CACHE_KEY = 'stats:public';
// Counting millions of GPS points on every anonymous request would be an easy denial of service.
const CACHE_TTL_SECS = 60;

export interface PublicStats {
  users: number;
  devices: number;
  trips: { draft: number; active: number; paused: number; completed: number; total: number };
  gps_points: number;
  generated_at: string;
}

type TripCounts = PublicStats['trips'];

/** Where the counts come from: each area's own service. */
interface Counts {
  users: () => Promise<number>;
  devices: () => Promise<number>;
  gpsPoints: () => Promise<number>;
  tripsByStatus: () => Promise<TripCounts>;
}

/** Counts that are safe to publish: no names, no positions. */
export function createStatsService(deps: { counts: Counts; kv: KeyValueStore; log: FastifyBaseLogger; clock: Clock }) {
  async function compute(): Promise<PublicStats> {
    const { counts } = deps;
    const [users, devices, gpsPoints, trips] = await Promise.all([
      counts.users(),
      counts.devices(),
      counts.gpsPoints(),
      counts.tripsByStatus(),
    ]);
    return { users, devices, trips, gps_points: gpsPoints, generated_at: deps.clock.now().toISOString() };
  }

  return {
    async publicStats(): Promise<PublicStats> {
      const cached = await deps.kv.get(CACHE_KEY).catch(() => null);
      if (cached) return JSON.parse(cached) as PublicStats;
      const stats = await compute();
      await deps.kv
        .set(CACHE_KEY, JSON.stringify(stats), CACHE_TTL_SECS)
        .catch((err) => deps.log.warn({ err }, 'stats cache unavailable'));
      return stats;
    },
  };
}

export type StatsService = ReturnType<typeof createStatsService>;
