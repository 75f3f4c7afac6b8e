import type { Kysely } from 'kysely';
import type { Schema } from '../../platform/db/schema/index.js';

const LISTED = [
  'id',
  'name',
  'device_type',
  'backed_up',
  'user_verified',
  'transports',
  'created_at',
  'last_used_at',
] as const;

export function createPasskeysRepo(db: Kysely<Schema>) {
  return {
    listOfUser: (userId: string) =>
      db.selectFrom('passkeys').select(LISTED).where('user_id', '=', userId).orderBy('created_at').execute(),

    credentialsOfUser: (userId: string) =>
      db.selectFrom('passkeys').select(['credential_id', 'transports']).where('user_id', '=', userId).execute(),

    countOfUser: async (userId: string, executor: Kysely<Schema> = db) =>
      Number(
        (
          await executor
            .selectFrom('passkeys')
            .select((eb) => eb.fn.countAll<string>().as('n'))
            .where('user_id', '=', userId)
            .executeTakeFirstOrThrow()
        ).n,
      ),

    countVerifyingOfUser: async (userId: string) =>
      Number(
        (
          await db
            .selectFrom('passkeys')
            .select((eb) => eb.fn.countAll<string>().as('n'))
            .where('user_id', '=', userId)
            .where('user_verified', '=', true)
            .executeTakeFirstOrThrow()
        ).n,
      ),

    findByCredentialId: (credentialId: string) =>
      db.selectFrom('passkeys').selectAll().where('credential_id', '=', credentialId).executeTakeFirst(),

    insert: (
      row: {
        user_id: string;
        credential_id: string;
        public_key: string;
        counter: number;
        transports: string[];
        device_type: string;
        backed_up: boolean;
        user_verified: boolean;
        name: string;
      },
      executor: Kysely<Schema> = db,
    ) => executor.insertInto('passkeys').values(row).returning(LISTED).executeTakeFirstOrThrow(),

    rename: (userId: string, id: string, name: string, executor: Kysely<Schema> = db) =>
      executor
        .updateTable('passkeys')
        .set({ name })
        .where('id', '=', id)
        .where('user_id', '=', userId)
        .returning(LISTED)
        .executeTakeFirst(),

    /** Deletes the passkey of this user; returns its name, or undefined when there was none. */
    async delete(userId: string, id: string, executor: Kysely<Schema>) {
      return executor
        .deleteFrom('passkeys')
        .where('id', '=', id)
        .where('user_id', '=', userId)
        .returning(['name'])
        .executeTakeFirst();
    },

    /** Deletes every passkey of the user; how many there were. */
    async deleteAllOfUser(userId: string, executor: Kysely<Schema>): Promise<number> {
      return Number(
        (await executor.deleteFrom('passkeys').where('user_id', '=', userId).executeTakeFirst()).numDeletedRows,
      );
    },

    /** Moves the counter forward only: of two racing sign-ins with the same counter, one updates and the other sees a clone. */
    async advance(id: string, counter: number, now: Date, executor: Kysely<Schema>): Promise<boolean> {
      const result = await executor
        .updateTable('passkeys')
        .set({ counter, last_used_at: now })
        .where('id', '=', id)
        // An authenticator without a counter always reports 0; one with a counter must report more than last time.
        .where('counter', counter > 0 ? '<' : '=', counter)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },
  };
}
