import type { Kysely } from 'kysely';
import type { GroupInvitationStatus, Schema } from '../../platform/db/schema/index.js';

const INVITATION_COLUMNS = [
  'i.id',
  'i.group_id',
  'i.user_id',
  'i.email',
  'i.invited_by',
  'i.created_at',
  'i.expires_at',
  'i.status',
  'i.answered_at',
] as const;
const INSERTED_COLUMNS = [
  'id',
  'group_id',
  'user_id',
  'email',
  'invited_by',
  'created_at',
  'expires_at',
  'status',
  'answered_at',
] as const;

export interface InvitationRow {
  id: string;
  group_id: string;
  user_id: string | null;
  email: string | null;
  invited_by: string | null;
  created_at: Date;
  expires_at: Date;
  status: GroupInvitationStatus;
  answered_at: Date | null;
}

/** A pending invitation past its end is expired, whether or not that was written yet. */
export function statusAt(row: Pick<InvitationRow, 'status' | 'expires_at'>, now: Date): GroupInvitationStatus {
  return row.status === 'pending' && row.expires_at <= now ? 'expired' : row.status;
}

/** SQL on the groups tables (groups, group_members, group_invitations); the rules are the service's. */
export function createGroupsRepo(db: Kysely<Schema>) {
  /** A group with its member count and whether `userId` administers it; only when `userId` is a member. */
  const groupsOf = (userId: string, executor: Kysely<Schema>) =>
    executor
      .selectFrom('group_members as m')
      .innerJoin('groups as g', 'g.id', 'm.group_id')
      .select((eb) => [
        'g.id',
        'g.name',
        'g.description',
        'g.created_at',
        'g.updated_at',
        'm.is_admin',
        eb
          .selectFrom('group_members as c')
          .select((count) => count.fn.countAll<string>().as('n'))
          .whereRef('c.group_id', '=', 'g.id')
          .as('member_count'),
      ])
      .where('m.user_id', '=', userId);
  const counted = <T extends { member_count: string | number | null }>(row: T) => ({
    ...row,
    member_count: Number(row.member_count),
  });

  return {
    async pageOfUser(userId: string, limit: number, offset: number) {
      const [rows, total] = await Promise.all([
        groupsOf(userId, db).orderBy('g.name').orderBy('g.id').limit(limit).offset(offset).execute(),
        db
          .selectFrom('group_members')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .where('user_id', '=', userId)
          .executeTakeFirstOrThrow(),
      ]);
      return { rows: rows.map(counted), total: Number(total.n) };
    },

    async groupOfMember(groupId: string, userId: string, executor: Kysely<Schema> = db) {
      const row = await groupsOf(userId, executor).where('g.id', '=', groupId).executeTakeFirst();
      return row && counted(row);
    },

    /** Locks the group's row (every change of its members or invitations takes it first); false when it is gone. */
    async lock(groupId: string, trx: Kysely<Schema>): Promise<boolean> {
      return Boolean(
        await trx.selectFrom('groups').select('id').where('id', '=', groupId).forUpdate().executeTakeFirst(),
      );
    },

    async nameOf(groupId: string, executor: Kysely<Schema> = db) {
      return (await executor.selectFrom('groups').select('name').where('id', '=', groupId).executeTakeFirst())?.name;
    },

    membership(groupId: string, userId: string, executor: Kysely<Schema> = db) {
      return executor
        .selectFrom('group_members')
        .select(['is_admin', 'joined_at'])
        .where('group_id', '=', groupId)
        .where('user_id', '=', userId)
        .executeTakeFirst();
    },

    async countGroupsOf(userId: string, executor: Kysely<Schema>): Promise<number> {
      const row = await executor
        .selectFrom('group_members')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('user_id', '=', userId)
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },

    async insertGroup(
      group: { name: string; description: string | null; created_by: string; created_at: Date },
      trx: Kysely<Schema>,
    ): Promise<string> {
      const row = await trx
        .insertInto('groups')
        .values({ ...group, updated_at: group.created_at })
        .returning('id')
        .executeTakeFirstOrThrow();
      return row.id;
    },

    async updateGroup(
      groupId: string,
      changes: { name?: string; description?: string | null; updated_at: Date },
      trx: Kysely<Schema>,
    ) {
      await trx.updateTable('groups').set(changes).where('id', '=', groupId).execute();
    },

    async deleteGroup(groupId: string, trx: Kysely<Schema>) {
      await trx.deleteFrom('groups').where('id', '=', groupId).execute();
    },

    async addMember(
      member: { group_id: string; user_id: string; is_admin: boolean; joined_at: Date },
      trx: Kysely<Schema>,
    ) {
      await trx.insertInto('group_members').values(member).execute();
    },

    async setAdmin(groupId: string, userId: string, isAdmin: boolean, trx: Kysely<Schema>) {
      await trx
        .updateTable('group_members')
        .set({ is_admin: isAdmin })
        .where('group_id', '=', groupId)
        .where('user_id', '=', userId)
        .execute();
    },

    async removeMember(groupId: string, userId: string, trx: Kysely<Schema>) {
      await trx.deleteFrom('group_members').where('group_id', '=', groupId).where('user_id', '=', userId).execute();
    },

    /** The members' ids and roles, longest-standing first. */
    roster(groupId: string, executor: Kysely<Schema> = db) {
      return executor
        .selectFrom('group_members')
        .select(['user_id', 'is_admin', 'joined_at'])
        .where('group_id', '=', groupId)
        .orderBy('joined_at')
        .orderBy('user_id')
        .execute();
    },

    async pageOfMembers(groupId: string, limit: number, offset: number) {
      const [rows, total] = await Promise.all([
        db
          .selectFrom('group_members')
          .select(['user_id', 'is_admin', 'joined_at'])
          .where('group_id', '=', groupId)
          .orderBy('joined_at')
          .orderBy('user_id')
          .limit(limit)
          .offset(offset)
          .execute(),
        db
          .selectFrom('group_members')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .where('group_id', '=', groupId)
          .executeTakeFirstOrThrow(),
      ]);
      return { rows, total: Number(total.n) };
    },

    async namesOf(ids: readonly string[]): Promise<Map<string, string>> {
      if (ids.length === 0) return new Map();
      const rows = await db
        .selectFrom('groups')
        .select(['id', 'name'])
        .where('id', 'in', [...ids])
        .execute();
      return new Map(rows.map((row) => [row.id, row.name]));
    },

    async groupIdsOf(userId: string): Promise<string[]> {
      const rows = await db.selectFrom('group_members').select('group_id').where('user_id', '=', userId).execute();
      return rows.map((row) => row.group_id);
    },

    /**
     * The groups of a user with every member of each, longest-standing first (for a purge of that user); the
     * groups' rows are locked first, in one order, as every other change of a group's members locks its row.
     */
    async rostersOfUser(userId: string, trx: Kysely<Schema>) {
      await trx
        .selectFrom('groups')
        .select('id')
        .where('id', 'in', (eb) => eb.selectFrom('group_members').select('group_id').where('user_id', '=', userId))
        .orderBy('id')
        .forUpdate()
        .execute();
      const rows = await trx
        .selectFrom('group_members as m')
        .select(['m.group_id', 'm.user_id', 'm.is_admin', 'm.joined_at'])
        .where('m.group_id', 'in', (eb) =>
          eb.selectFrom('group_members').select('group_id').where('user_id', '=', userId),
        )
        .orderBy('m.group_id')
        .orderBy('m.joined_at')
        .orderBy('m.user_id')
        .execute();
      const rosters = new Map<string, typeof rows>();
      for (const row of rows) rosters.set(row.group_id, [...(rosters.get(row.group_id) ?? []), row]);
      return rosters;
    },

    // Invitations.

    /** Writes 'expired' on the group's pending invitations past their end (so the unique indexes free their slot). */
    async expireDue(groupId: string, now: Date, trx: Kysely<Schema>) {
      await trx
        .updateTable('group_invitations')
        .set({ status: 'expired' })
        .where('group_id', '=', groupId)
        .where('status', '=', 'pending')
        .where('expires_at', '<=', now)
        .execute();
    },

    async countPending(groupId: string, now: Date, trx: Kysely<Schema>): Promise<number> {
      const row = await trx
        .selectFrom('group_invitations')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('group_id', '=', groupId)
        .where('status', '=', 'pending')
        .where('expires_at', '>', now)
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },

    insertInvitation(
      invitation: {
        group_id: string;
        invited_by: string;
        user_id: string | null;
        email: string | null;
        created_at: Date;
        expires_at: Date;
      },
      trx: Kysely<Schema>,
    ): Promise<InvitationRow> {
      return trx
        .insertInto('group_invitations')
        .values(invitation)
        .returning(INSERTED_COLUMNS)
        .executeTakeFirstOrThrow();
    },

    pendingOfGroup(groupId: string, now: Date): Promise<InvitationRow[]> {
      return db
        .selectFrom('group_invitations as i')
        .select(INVITATION_COLUMNS)
        .where('i.group_id', '=', groupId)
        .where('i.status', '=', 'pending')
        .where('i.expires_at', '>', now)
        .orderBy('i.created_at', 'desc')
        .orderBy('i.id')
        .execute();
    },

    /** An invitation of the group, pending (expired or not), locked. */
    pendingOfGroupById(groupId: string, invitationId: string, trx: Kysely<Schema>) {
      return trx
        .selectFrom('group_invitations as i')
        .select(INVITATION_COLUMNS)
        .where('i.group_id', '=', groupId)
        .where('i.id', '=', invitationId)
        .where('i.status', '=', 'pending')
        .forUpdate()
        .executeTakeFirst();
    },

    async deleteInvitation(invitationId: string, trx: Kysely<Schema>) {
      await trx.deleteFrom('group_invitations').where('id', '=', invitationId).execute();
    },

    /** An invitation to this user, with its group's name. */
    invitationOfUser(invitationId: string, userId: string, executor: Kysely<Schema> = db) {
      return executor
        .selectFrom('group_invitations as i')
        .innerJoin('groups as g', 'g.id', 'i.group_id')
        .select([...INVITATION_COLUMNS, 'g.name as group_name'])
        .where('i.id', '=', invitationId)
        .where('i.user_id', '=', userId)
        .executeTakeFirst();
    },

    async pageOfUserInvitations(userId: string, now: Date, limit: number, offset: number) {
      const pending = db
        .selectFrom('group_invitations as i')
        .where('i.user_id', '=', userId)
        .where('i.status', '=', 'pending')
        .where('i.expires_at', '>', now);
      const [rows, total] = await Promise.all([
        pending
          .innerJoin('groups as g', 'g.id', 'i.group_id')
          .select([...INVITATION_COLUMNS, 'g.name as group_name'])
          .orderBy('i.created_at', 'desc')
          .orderBy('i.id')
          .limit(limit)
          .offset(offset)
          .execute(),
        pending.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
      ]);
      return { rows, total: Number(total.n) };
    },

    /** Answers an invitation (and any other still pending for the same user and group, when accepting). */
    async answer(
      invitation: { id: string; group_id: string; user_id: string },
      status: 'accepted' | 'declined',
      now: Date,
      trx: Kysely<Schema>,
    ) {
      await trx
        .updateTable('group_invitations')
        .set({ status, answered_at: now })
        .where((eb) =>
          status === 'accepted'
            ? eb.or([
                eb('id', '=', invitation.id),
                eb.and([
                  eb('group_id', '=', invitation.group_id),
                  eb('user_id', '=', invitation.user_id),
                  eb('status', '=', 'pending'),
                ]),
              ])
            : eb('id', '=', invitation.id),
        )
        .execute();
    },

    async markExpired(invitationId: string, trx: Kysely<Schema>) {
      await trx.updateTable('group_invitations').set({ status: 'expired' }).where('id', '=', invitationId).execute();
    },

    /** Pending, unexpired invitations to an address nobody had registered: they become `userId`'s (locked). */
    async claimByEmail(email: string, userId: string, now: Date, trx: Kysely<Schema>) {
      return trx
        .updateTable('group_invitations')
        .set({ user_id: userId })
        .where('email', '=', email)
        .where('user_id', 'is', null)
        .where('status', '=', 'pending')
        .where('expires_at', '>', now)
        .returning(['id', 'group_id', 'invited_by'])
        .execute();
    },
  };
}
