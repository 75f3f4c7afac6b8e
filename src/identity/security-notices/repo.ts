import { sql, type Kysely } from 'kysely';
import type { Schema } from '../../platform/db/schema/index.js';

export interface NoticeSettings {
  new_sign_in: boolean;
  new_api_key: boolean;
}

const ALL_ON: NoticeSettings = { new_sign_in: true, new_api_key: true };

export function createSecurityNoticesRepo(db: Kysely<Schema>) {
  return {
    /**
     * Records a sign-in from this fingerprint; answers whether it is new for a user who had signed in
     * from somewhere else before (a user's first ever fingerprint is recorded without a notice).
     */
    async recordDevice(userId: string, fingerprint: string, now: Date): Promise<'new' | 'known' | 'first'> {
      return db.transaction().execute(async (trx) => {
        const inserted = await trx
          .insertInto('sign_in_devices')
          .values({ user_id: userId, fingerprint, first_seen_at: now, last_seen_at: now })
          .onConflict((oc) => oc.columns(['user_id', 'fingerprint']).doUpdateSet({ last_seen_at: now }))
          // xmax is 0 for a row this statement inserted, not for one it updated.
          .returning(sql<boolean>`xmax = 0`.as('inserted'))
          .executeTakeFirstOrThrow();
        if (!inserted.inserted) return 'known';
        const others = await trx
          .selectFrom('sign_in_devices')
          .select('fingerprint')
          .where('user_id', '=', userId)
          .where('fingerprint', '!=', fingerprint)
          .limit(1)
          .executeTakeFirst();
        return others ? 'new' : 'first';
      });
    },

    /** Fingerprints not seen for longer than the retention are forgotten (a sign-in from there is new again). */
    async forgetDevicesNotSeenSince(before: Date): Promise<number> {
      const result = await db.deleteFrom('sign_in_devices').where('last_seen_at', '<', before).executeTakeFirst();
      return Number(result.numDeletedRows);
    },

    /** When each browser and network the user signed in from was first and last seen (the fingerprint, a hash, is no use to them). */
    devicesOf: (userId: string) =>
      db
        .selectFrom('sign_in_devices')
        .select(['first_seen_at', 'last_seen_at'])
        .where('user_id', '=', userId)
        .orderBy('first_seen_at')
        .execute(),

    async settingsOf(userId: string): Promise<NoticeSettings> {
      const row = await db
        .selectFrom('security_notice_settings')
        .select(['new_sign_in', 'new_api_key'])
        .where('user_id', '=', userId)
        .executeTakeFirst();
      return row ?? ALL_ON;
    },

    async updateSettings(userId: string, changes: Partial<NoticeSettings>): Promise<NoticeSettings> {
      return db
        .insertInto('security_notice_settings')
        .values({ user_id: userId, ...ALL_ON, ...changes })
        .onConflict((oc) => oc.column('user_id').doUpdateSet({ ...changes, updated_at: new Date() }))
        .returning(['new_sign_in', 'new_api_key'])
        .executeTakeFirstOrThrow();
    },
  };
}
