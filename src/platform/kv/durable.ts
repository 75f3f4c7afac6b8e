import { sql, type Kysely } from 'kysely';
import type { Clock } from '../clock.js';
import type { Schema } from '../db/schema/index.js';
import { windowOf, type KeyValueStore, type WindowCount } from './kv.js';

/**
 * What state that must outlive a restart needs of a store: sign-in locks and their failure counts, and
 * replay markers of signed tokens (a nonce claimed once for as long as its token passes the other checks).
 * Redis offers it when REDIS_URL is set; without Redis, the database does (`DatabaseStore`), since the
 * in-process store forgets everything when the process stops.
 */
export type DurableStore = Pick<
  KeyValueStore,
  'get' | 'set' | 'delete' | 'setIfAbsent' | 'hitWindow' | 'unhitWindow' | 'resetWindow'
>;

/**
 * The durable store over the table `kv_durable` (PGlite or PostgreSQL). Each operation is one statement,
 * atomic on every node of the database. Expiry follows the service's clock, as every rule about time does:
 * a row is live while its `expires_at` is after the clock's now, and `purgeExpired` (the hourly job)
 * deletes the rest. Only the consumers that need durability use it; caches and rate limits stay in the process.
 */
export class DatabaseStore implements DurableStore {
  constructor(
    private readonly db: Kysely<Schema>,
    private readonly clock: Clock,
  ) {}

  async get(key: string): Promise<string | null> {
    const row = await this.db
      .selectFrom('kv_durable')
      .select('value')
      .where('key', '=', key)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', this.clock.now())]))
      .executeTakeFirst();
    return row?.value ?? null;
  }

  async set(key: string, value: string, ttlSecs?: number): Promise<void> {
    const expires_at = this.#expiry(ttlSecs);
    await this.db
      .insertInto('kv_durable')
      .values({ key, value, expires_at })
      .onConflict((oc) => oc.column('key').doUpdateSet({ value, expires_at }))
      .execute();
  }

  async delete(key: string): Promise<void> {
    await this.db.deleteFrom('kv_durable').where('key', '=', key).execute();
  }

  /** Inserts, or takes over a row that has expired; a live row stays (false). */
  async setIfAbsent(key: string, value: string, ttlSecs: number): Promise<boolean> {
    const now = this.clock.now();
    const expires_at = this.#expiry(ttlSecs, now.getTime());
    const stored = await this.db
      .insertInto('kv_durable')
      .values({ key, value, expires_at })
      .onConflict((oc) => oc.column('key').doUpdateSet({ value, expires_at }).where('kv_durable.expires_at', '<=', now))
      .returning('key')
      .executeTakeFirst();
    return stored !== undefined;
  }

  /** A window's count is a row of its own (`key:index`), expiring when the window ends. */
  async hitWindow(key: string, windowSecs: number, now = this.clock.nowMs(), hits = 1): Promise<WindowCount> {
    const { index, resetAt } = windowOf(windowSecs, now);
    const row = await this.db
      .insertInto('kv_durable')
      .values({ key: `${key}:${index}`, value: String(hits), expires_at: new Date(resetAt * 1000) })
      .onConflict((oc) =>
        oc.column('key').doUpdateSet({ value: sql<string>`(kv_durable.value::bigint + ${hits})::text` }),
      )
      .returning('value')
      .executeTakeFirstOrThrow();
    return { count: Number(row.value), resetAt };
  }

  async unhitWindow(key: string, windowSecs: number, now: number): Promise<void> {
    await this.db
      .updateTable('kv_durable')
      .set({ value: sql<string>`(value::bigint - 1)::text` })
      .where('key', '=', `${key}:${windowOf(windowSecs, now).index}`)
      .where(sql<boolean>`value::bigint > 0`)
      .execute();
  }

  async resetWindow(key: string, windowSecs: number, now = this.clock.nowMs()): Promise<void> {
    await this.delete(`${key}:${windowOf(windowSecs, now).index}`);
  }

  /** Deletes the rows that have expired; how many. */
  async purgeExpired(): Promise<number> {
    const result = await this.db
      .deleteFrom('kv_durable')
      .where('expires_at', '<=', this.clock.now())
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  #expiry(ttlSecs: number | undefined, nowMs = this.clock.nowMs()): Date | null {
    return ttlSecs === undefined ? null : new Date(nowMs + ttlSecs * 1000);
  }
}
