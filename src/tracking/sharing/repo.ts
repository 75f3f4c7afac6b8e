import type { Insertable, Kysely, Selectable } from 'kysely';
import type { Schema } from '../../platform/db/schema/index.js';
import type { DeviceSharesTable } from '../../platform/db/schema/tracking.js';

export type ShareRow = Selectable<DeviceSharesTable>;

/** A share as written: every column but the generated ones, none left out (null says "none"). */
export type NewShare = Required<Omit<Insertable<DeviceSharesTable>, 'id' | 'created_at' | 'updated_at'>>;

export function createSharesRepo(db: Kysely<Schema>) {
  const shares = (executor: Kysely<Schema> = db) => executor.selectFrom('device_shares').selectAll();
  return {
    /** Shares to this user, directly or through one of these groups (what reaches them). */
    reaching: (userId: string, groupIds: string[]) =>
      shares()
        .where((eb) =>
          eb.or([eb('user_id', '=', userId), ...(groupIds.length > 0 ? [eb('group_id', 'in', groupIds)] : [])]),
        )
        .orderBy('created_at')
        .execute(),

    /** Shares these owners made (outgoing), newest first; with `deviceId`, those reaching that device. */
    byOwners: (ownerIds: string[], deviceId?: string) => {
      let query = shares().where('owner_id', 'in', ownerIds);
      if (deviceId) query = query.where((eb) => eb.or([eb('device_id', '=', deviceId), eb('device_id', 'is', null)]));
      return query.orderBy('created_at', 'desc').orderBy('id').execute();
    },

    get: (id: string) => shares().where('id', '=', id).executeTakeFirst(),

    /** How many shares the owner has, and the device has (the bounds). */
    async counts(ownerId: string, deviceId: string | null) {
      const row = await db
        .selectFrom('device_shares')
        .select((eb) => [
          eb.fn.countAll<number>().as('owner'),
          eb.fn
            .count<number>('id')
            .filterWhere(deviceId === null ? eb('device_id', 'is', null) : eb('device_id', '=', deviceId))
            .as('device'),
        ])
        .where('owner_id', '=', ownerId)
        .executeTakeFirstOrThrow();
      return { owner: Number(row.owner), device: Number(row.device) };
    },

    /** A new share, or the one for the same device and grantee changed: one share per pair. */
    async upsert(trx: Kysely<Schema>, share: NewShare) {
      const existing = await shares(trx)
        .where('owner_id', '=', share.owner_id)
        .where((eb) => (share.device_id === null ? eb('device_id', 'is', null) : eb('device_id', '=', share.device_id)))
        .where((eb) => (share.user_id === null ? eb('user_id', 'is', null) : eb('user_id', '=', share.user_id)))
        .where((eb) => (share.group_id === null ? eb('group_id', 'is', null) : eb('group_id', '=', share.group_id)))
        .executeTakeFirst();
      if (existing) {
        const changed = await trx
          .updateTable('device_shares')
          .set({
            level: share.level,
            history_days: share.history_days,
            expires_at: share.expires_at,
            updated_at: new Date(),
          })
          .where('id', '=', existing.id)
          .returningAll()
          .executeTakeFirstOrThrow();
        return { share: changed, created: false };
      }
      return {
        share: await trx.insertInto('device_shares').values(share).returningAll().executeTakeFirstOrThrow(),
        created: true,
      };
    },

    update: (
      trx: Kysely<Schema>,
      id: string,
      fields: Partial<Pick<NewShare, 'level' | 'history_days' | 'expires_at'>>,
    ) =>
      trx
        .updateTable('device_shares')
        .set({ ...fields, updated_at: new Date() })
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirst(),

    delete: (trx: Kysely<Schema>, id: string) =>
      trx.deleteFrom('device_shares').where('id', '=', id).returningAll().executeTakeFirst(),

    /** The shares through which a device is seen: its own, and its owner's of every device. */
    reachingDevice: (trx: Kysely<Schema>, deviceId: string, ownerId: string | null) =>
      shares(trx)
        .where((eb) =>
          eb.or([
            eb('device_id', '=', deviceId),
            ...(ownerId === null ? [] : [eb.and([eb('device_id', 'is', null), eb('owner_id', '=', ownerId)])]),
          ]),
        )
        .execute(),

    /** A device changed hands: its own shares were the old owner's to give, so they end. */
    deleteOfDevice: (trx: Kysely<Schema>, deviceId: string) =>
      trx.deleteFrom('device_shares').where('device_id', '=', deviceId).returningAll().execute(),
  };
}
