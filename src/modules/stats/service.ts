import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Schema } from '../../platform/db/schema.js';
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

/** Counts that are safe to publish: no names, no positions. */
export function createStatsService(deps: { db: Kysely<Schema>; kv: KeyValueStore; log: FastifyBaseLogger }) {
  const count = async (table: 'users' | 'devices' | 'gps_points') => {
    let query = deps.db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n'));
    if (table === 'users') query = query.where('deleted_at', 'is', null);
    return Number((await query.executeTakeFirstOrThrow()).n);
  };

  async function compute(): Promise<PublicStats> {
    const [users, devices, gpsPoints, tripRows] = await Promise.all([
      count('users'),
      count('devices'),
      count('gps_points'),
      deps.db.selectFrom('trips').select(['status', (eb) => eb.fn.countAll<number>().as('n')]).groupBy('status').execute(),
    ]);
    const trips = { draft: 0, active: 0, paused: 0, completed: 0, total: 0 };
    for (const row of tripRows) {
      trips[row.status] = Number(row.n);
      trips.total += Number(row.n);
    }
    return { users, devices, trips, gps_points: gpsPoints, generated_at: new Date().toISOString() };
  }

  return {
    async publicStats(): Promise<PublicStats> {
      const cached = await deps.kv.get(CACHE_KEY).catch(() => null);
      if (cached) return JSON.parse(cached) as PublicStats;
      const stats = await compute();
      await deps.kv.set(CACHE_KEY, JSON.stringify(stats), CACHE_TTL_SECS).catch((err) => deps.log.warn({ err }, 'stats cache unavailable'));
      return stats;
    },
  };
}

export type StatsService = ReturnType<typeof createStatsService>;
