import { sql, type Kysely } from 'kysely';
import type { Clock } from '../../platform/clock.js';
import type { Schema } from '../../platform/db/schema/index.js';

/** How many months ahead of now gps_points always has partitions (the job runs daily, so months of slack). */
export const MONTHS_AHEAD = 3;
/** How far back months are made for old points (older ones stay in gps_points_before, removed by retention only). */
export const MONTHS_BACK = 120;
const DAY_MS = 86_400_000;

/**
 * The monthly partitions of gps_points (migration 0035) over time: months added ahead, and points past the
 * retention period removed, by the database functions the migration made (DDL on partitions, which no query
 * builder expresses). Both run as scheduled jobs, once across nodes.
 */
export function createGpsPartitions(deps: { db: Kysely<Schema>; clock: Clock }) {
  return {
    /**
     * Adds the months up to MONTHS_AHEAD after this one that have no partition yet, and months for the points
     * that arrived older than the first month (an import of old tracks: they wait in gps_points_before), at
     * most MONTHS_BACK back from now.
     */
    async addMonths(): Promise<{ partitions_added: number; partitions_added_before: number }> {
      const now = deps.clock.now();
      const until = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + MONTHS_AHEAD, 1));
      const limit = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - MONTHS_BACK, 1));
      return deps.db.transaction().execute(async (trx) => {
        const ahead = await sql<{ added: number }>`select gps_points_extend(${until}) as added`.execute(trx);
        // Read apart from the call: the call replaces the partition this reads.
        const oldest = (
          await sql<{ at: Date | null }>`select min("timestamp") as at from gps_points_before`.execute(trx)
        ).rows[0]?.at;
        const since = oldest ? new Date(Math.max(oldest.getTime(), limit.getTime())) : undefined;
        const back = since
          ? await sql<{ added: number }>`select gps_points_extend_back(${since}) as added`.execute(trx)
          : undefined;
        return { partitions_added: ahead.rows[0]!.added, partitions_added_before: back?.rows[0]!.added ?? 0 };
      });
    },

    /**
     * Removes every point older than `retentionDays` (null: none): whole months by dropping their partitions,
     * the month holding the cutoff by deleting rows. Points of trips go too (the trips stay, their counts lowered).
     */
    async expire(retentionDays: number | null) {
      if (retentionDays === null) return { retention_days: null, partitions_dropped: 0, points_deleted: 0 };
      const cutoff = new Date(deps.clock.nowMs() - retentionDays * DAY_MS);
      const { rows } = await deps.db.transaction().execute((trx) =>
        sql<{
          partitions_dropped: number;
          points_deleted: number;
        }>`select * from gps_points_expire(${cutoff})`.execute(trx),
      );
      return { retention_days: retentionDays, cutoff: cutoff.toISOString(), ...rows[0]! };
    },
  };
}
