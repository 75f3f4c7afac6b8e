import { sql, type Kysely } from 'kysely';
import type { Clock } from '../../platform/clock.js';
import type { Schema } from '../../platform/db/schema/index.js';

/** How many months ahead of now gps_points always has partitions (the job runs daily, so months of slack). */
export const MONTHS_AHEAD = 3;
const DAY_MS = 86_400_000;

/**
 * The monthly partitions of gps_points (migration 0035) over time: months added ahead, and points past the
 * retention period removed, by the database functions the migration made (DDL on partitions, which no query
 * builder expresses). Both run as scheduled jobs, once across nodes.
 */
export function createGpsPartitions(deps: { db: Kysely<Schema>; clock: Clock }) {
  return {
    /** Adds the months up to MONTHS_AHEAD after this one that have no partition yet. */
    async addMonthsAhead(): Promise<{ partitions_added: number }> {
      const until = new Date(deps.clock.now());
      until.setUTCMonth(until.getUTCMonth() + MONTHS_AHEAD, 1);
      const { rows } = await sql<{ added: number }>`select gps_points_extend(${until}) as added`.execute(deps.db);
      return { partitions_added: rows[0]!.added };
    },

    /**
     * Removes every point older than `retentionDays` (null: none): whole months by dropping their partitions,
     * the month holding the cutoff by deleting rows. Points of trips go too (the trips stay, their counts lowered).
     */
    async expire(retentionDays: number | null) {
      if (retentionDays === null) return { retention_days: null, partitions_dropped: 0, points_deleted: 0 };
      const cutoff = new Date(deps.clock.nowMs() - retentionDays * DAY_MS);
      const { rows } = await deps.db.transaction().execute((trx) =>
        sql<{ partitions_dropped: number; points_deleted: number }>`select * from gps_points_expire(${cutoff})`.execute(trx),
      );
      return { retention_days: retentionDays, cutoff: cutoff.toISOString(), ...rows[0]! };
    },
  };
}
