import type { Kysely } from 'kysely';
import type { Schema } from '../../platform/db/schema/index.js';

export interface Preferences {
  speed_unit: 'kmh' | 'mph' | 'knots';
  distance_unit: 'km' | 'mi' | 'nmi';
  time_zone: string | null;
  coordinate_format: 'decimal' | 'dm' | 'dms';
}

/** A user without a row has these (the time zone: the browser's). */
export const DEFAULT_PREFERENCES: Preferences = {
  speed_unit: 'kmh',
  distance_unit: 'km',
  time_zone: null,
  coordinate_format: 'decimal',
};

const COLUMNS = ['speed_unit', 'distance_unit', 'time_zone', 'coordinate_format'] as const;

export function createPreferencesRepo(db: Kysely<Schema>) {
  return {
    async of(userId: string): Promise<Preferences> {
      const row = await db
        .selectFrom('user_preferences')
        .select(COLUMNS)
        .where('user_id', '=', userId)
        .executeTakeFirst();
      return row ?? DEFAULT_PREFERENCES;
    },

    /** Sets the given fields; the first change writes the row, with the defaults for the rest. */
    update: (userId: string, changes: Partial<Preferences>): Promise<Preferences> =>
      db
        .insertInto('user_preferences')
        .values({ user_id: userId, ...DEFAULT_PREFERENCES, ...changes })
        .onConflict((oc) => oc.column('user_id').doUpdateSet({ ...changes, updated_at: new Date() }))
        .returning(COLUMNS)
        .executeTakeFirstOrThrow(),
  };
}
