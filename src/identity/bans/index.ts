import { expressionBuilder, sql, type Expression, type SqlBool } from 'kysely';
import type { Schema } from '../../platform/db/schema/index.js';

/**
 * "A ban of this user is in force at `now`", for the credential lookups of sessions and API keys to
 * join into their one query (a hot path on a cache miss). The bans module owns the table and
 * therefore this predicate; callers pass the column holding the user id, e.g. `'u.id'`, or the id itself
 * as an expression (`sql\`${id}::uuid\``).
 */
export function banInForce(userId: string | Expression<string>, now: Date): Expression<SqlBool> {
  const eb = expressionBuilder<Schema, never>();
  const user = typeof userId === 'string' ? sql.ref<string>(userId) : userId;
  return eb.exists(
    eb
      .selectFrom('user_bans as b')
      .select('b.id')
      .where('b.user_id', '=', user)
      .where('b.unbanned_at', 'is', null)
      .where((ban) => ban.or([ban('b.expires_at', 'is', null), ban('b.expires_at', '>', now)])),
  );
}
