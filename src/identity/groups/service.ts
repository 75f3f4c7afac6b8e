import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { AuditEntry, AuditWriter } from '../../platform/audit.js';
import type { Clock } from '../../platform/clock.js';
import type { Schema } from '../../platform/db/schema/index.js';
import { afterCommit, type DomainEventBus, type TransactionalEvent } from '../../platform/events.js';
import type { Mailer } from '../../platform/mail/mailer.js';
import type { MailContact, MailMessage } from '../../platform/mail/messages.js';
import { linkBaseUrl } from '../../platform/mail/token-mail.js';
import { normaliseEmail, type UsersService } from '../users/service.js';
import { GroupErrors } from './errors.js';
import { invitationMail, signUpInvitationMail } from './mails.js';
import { createGroupsRepo, statusAt, type InvitationRow } from './repo.js';
import type { CreateGroupInput, InviteInput, UpdateGroupInput } from './schemas.js';

/** A user belongs to at most this many groups (creating one and accepting an invitation count). */
export const MAX_GROUPS_PER_USER = 100;
/** A group has at most this many pending invitations: an admin cannot mail the world in one go. */
export const MAX_PENDING_INVITATIONS = 50;
/** How long an invitation can be answered. */
export const INVITATION_LIFETIME_MS = 14 * 86_400_000;
/** Where a sign-up link of an invitation to an address of nobody leads, under FRONTEND_URL (else PUBLIC_URL). */
export const SIGN_UP_PATH = '/register';

interface Deps {
  db: Kysely<Schema>;
  clock: Clock;
  audit: AuditWriter;
  events: Pick<DomainEventBus, 'emit'>;
  mailer: Pick<Mailer, 'send'>;
  log: FastifyBaseLogger;
  users: Pick<UsersService, 'findByUsername' | 'findEmailAccount' | 'usernamesOf' | 'lockById'>;
  /** Where and how to mail a user (their time zone too, for the invitation's end). */
  contactOf: (userId: string) => Promise<MailContact | undefined>;
  /** Where a registered invitee answers invitations (the console's Groups page). */
  invitationsUrl: string;
}

interface Page {
  limit: number;
  offset: number;
}

/**
 * Groups (issue 43): a user creates one (a family, a crew, a team) and administers it; admins invite people by
 * username or email, change who administers it and remove members; members leave. Only members learn that a
 * group exists: anyone else is answered 404 as for an unknown id. What the tracking context needs of it (which
 * groups a user is in, who is in a group) it reads through `groupIdsOf`, `memberIdsOf` and `isMember`, and it
 * hears of changes by `group.members_changed` (after commit) and `group.deleting` (in the deletion's transaction).
 */
export function createGroupsService(deps: Deps) {
  const { db, clock } = deps;
  const repo = createGroupsRepo(db);

  const record = (request: FastifyRequest | null, entry: AuditEntry, trx: Kysely<Schema>) =>
    deps.audit.record(request, entry, trx);

  /** After commit: the users whose membership of the group changed. */
  const membersChanged = (groupId: string, userIds: string[]) =>
    userIds.length ? deps.events.emit('group.members_changed', { groupId, userIds }).then(() => undefined) : undefined;

  async function requireMember(groupId: string, userId: string, executor: Kysely<Schema> = db) {
    const membership = await repo.membership(groupId, userId, executor);
    if (!membership) throw GroupErrors.not_found();
    return membership;
  }

  async function requireAdmin(groupId: string, userId: string, executor: Kysely<Schema>) {
    const membership = await requireMember(groupId, userId, executor);
    if (!membership.is_admin) throw GroupErrors.admin_required();
    return membership;
  }

  /** Locks the group and checks the caller is an admin of it (404 for a stranger, as for no group at all). */
  async function lockAsAdmin(groupId: string, userId: string, trx: Kysely<Schema>) {
    if (!(await repo.lock(groupId, trx))) throw GroupErrors.not_found();
    return requireAdmin(groupId, userId, trx);
  }

  async function groupOf(groupId: string, userId: string, executor: Kysely<Schema> = db) {
    const group = await repo.groupOfMember(groupId, userId, executor);
    if (!group) throw GroupErrors.not_found();
    return group;
  }

  /**
   * Deletes a locked group in the caller's transaction (what hangs on it goes with it: `group.deleting`) and
   * records `group_deleted` (by `actorId`; none when its last member is purged, whose events are pseudonymised in
   * the same transaction).
   */
  async function deleteLocked(
    groupId: string,
    memberIds: string[],
    trx: Kysely<Schema>,
    onCommit: TransactionalEvent['onCommit'],
    by: { request: FastifyRequest | null; actorId: string | null; reason?: string },
  ) {
    const name = await repo.nameOf(groupId, trx);
    await deps.events.emit('group.deleting', { groupId, memberIds, trx, onCommit });
    await repo.deleteGroup(groupId, trx);
    const metadata = { name, members: memberIds.length, ...(by.reason && { reason: by.reason }) };
    const actor = by.actorId ? { userId: by.actorId, actorId: by.actorId } : {};
    await record(
      by.request,
      { eventType: 'group_deleted', ...actor, resourceType: 'group', resourceId: groupId, metadata },
      trx,
    );
  }

  async function memberView(member: { user_id: string; is_admin: boolean; joined_at: Date }) {
    const names = await deps.users.usernamesOf([member.user_id]);
    return { ...member, username: names.get(member.user_id) ?? '' };
  }

  /** An invitation as the group's admins see it: the username or the address they invited, never more. */
  async function invitationViews(rows: InvitationRow[]) {
    const now = clock.now();
    const byUsername = rows.filter((row) => row.email === null && row.user_id !== null).map((row) => row.user_id!);
    const names = await deps.users.usernamesOf(byUsername);
    return rows.map((row) => ({
      id: row.id,
      group_id: row.group_id,
      username: row.email === null && row.user_id ? (names.get(row.user_id) ?? null) : null,
      email: row.email,
      invited_by: row.invited_by,
      created_at: row.created_at,
      expires_at: row.expires_at,
      status: statusAt(row, now),
      answered_at: row.answered_at,
    }));
  }

  /** Invitations as their invitee sees them: the group's name and who invited them. */
  async function myInvitationViews(rows: (InvitationRow & { group_name: string })[]) {
    const now = clock.now();
    const inviters = [...new Set(rows.map((row) => row.invited_by).filter((id): id is string => id !== null))];
    const names = await deps.users.usernamesOf(inviters);
    return rows.map((row) => ({
      id: row.id,
      group_id: row.group_id,
      group_name: row.group_name,
      invited_by: row.invited_by,
      invited_by_username: row.invited_by ? (names.get(row.invited_by) ?? null) : null,
      created_at: row.created_at,
      expires_at: row.expires_at,
      status: statusAt(row, now),
      answered_at: row.answered_at,
    }));
  }

  /** Mails an invitation after its commit; a mail that cannot be sent is logged, the invitation stands. */
  async function mail(to: string, message: MailMessage): Promise<void> {
    try {
      await deps.mailer.send(to, message);
    } catch (err) {
      deps.log.warn({ err, subject: message.subject }, 'could not send a group invitation mail');
    }
  }

  /** Answers the caller's invitation; 404 for anybody else's, 409 once answered or expired. */
  async function answer(
    request: FastifyRequest,
    userId: string,
    invitationId: string,
    status: 'accepted' | 'declined',
  ) {
    let joined: string | undefined;
    const answered = await db.transaction().execute(async (trx) => {
      // The user's row orders their accepts (the bound of groups); the group's row its membership changes.
      await deps.users.lockById(userId, trx);
      const seen = await repo.invitationOfUser(invitationId, userId, trx);
      if (!seen) throw GroupErrors.invitation_not_found();
      await repo.lock(seen.group_id, trx);
      const invitation = await repo.invitationOfUser(invitationId, userId, trx);
      if (!invitation) throw GroupErrors.invitation_not_found();
      const now = clock.now();
      const current = statusAt(invitation, now);
      if (current === 'expired') throw GroupErrors.invitation_expired();
      if (current !== 'pending') throw GroupErrors.invitation_answered();
      if (status === 'accepted' && !(await repo.membership(invitation.group_id, userId, trx))) {
        if ((await repo.countGroupsOf(userId, trx)) >= MAX_GROUPS_PER_USER) throw GroupErrors.too_many_groups();
        await repo.addMember({ group_id: invitation.group_id, user_id: userId, is_admin: false, joined_at: now }, trx);
        joined = invitation.group_id;
      }
      await repo.answer({ id: invitation.id, group_id: invitation.group_id, user_id: userId }, status, now, trx);
      await record(
        request,
        {
          eventType: status === 'accepted' ? 'group_invitation_accepted' : 'group_invitation_declined',
          userId,
          actorId: userId,
          resourceType: 'group_invitation',
          resourceId: invitation.id,
          metadata: { group_id: invitation.group_id },
        },
        trx,
      );
      return { ...invitation, status, answered_at: now };
    });
    if (joined) await membersChanged(joined, [userId]);
    return (await myInvitationViews([answered]))[0]!;
  }

  return {
    /** GET /v1/groups: the caller's groups, by name. */
    listOf: (userId: string, page: Page) => repo.pageOfUser(userId, page.limit, page.offset),

    /** GET /v1/groups/{id}: members only (404 for anyone else). */
    get: (userId: string, groupId: string) => groupOf(groupId, userId),

    /** POST /v1/groups: the creator is its first member and admin. */
    async create(request: FastifyRequest, userId: string, input: CreateGroupInput) {
      const name = input.name.trim();
      if (!name) throw GroupErrors.name_required();
      const group = await db.transaction().execute(async (trx) => {
        // The user's row orders their joins, so the bound of groups holds under concurrent requests.
        await deps.users.lockById(userId, trx);
        if ((await repo.countGroupsOf(userId, trx)) >= MAX_GROUPS_PER_USER) throw GroupErrors.too_many_groups();
        const now = clock.now();
        const groupId = await repo.insertGroup(
          { name, description: input.description ?? null, created_by: userId, created_at: now },
          trx,
        );
        await repo.addMember({ group_id: groupId, user_id: userId, is_admin: true, joined_at: now }, trx);
        await record(
          request,
          {
            eventType: 'group_created',
            userId,
            actorId: userId,
            resourceType: 'group',
            resourceId: groupId,
            metadata: { name },
          },
          trx,
        );
        return groupOf(groupId, userId, trx);
      });
      await membersChanged(group.id, [userId]);
      return group;
    },

    /** PATCH /v1/groups/{id} (its admins). */
    async update(request: FastifyRequest, userId: string, groupId: string, input: UpdateGroupInput) {
      const name = input.name?.trim();
      if (name === '') throw GroupErrors.name_required();
      return db.transaction().execute(async (trx) => {
        await lockAsAdmin(groupId, userId, trx);
        const changes = {
          ...(name !== undefined && { name }),
          ...(input.description !== undefined && { description: input.description }),
        };
        await repo.updateGroup(groupId, { ...changes, updated_at: clock.now() }, trx);
        await record(
          request,
          {
            eventType: 'group_updated',
            userId,
            actorId: userId,
            resourceType: 'group',
            resourceId: groupId,
            metadata: { changed: Object.keys(changes) },
          },
          trx,
        );
        return groupOf(groupId, userId, trx);
      });
    },

    /** DELETE /v1/groups/{id} (its admins): its members, invitations and what is shared with it go too. */
    async remove(request: FastifyRequest, userId: string, groupId: string): Promise<void> {
      const { onCommit, committed } = afterCommit();
      const memberIds = await db.transaction().execute(async (trx) => {
        await lockAsAdmin(groupId, userId, trx);
        const ids = (await repo.roster(groupId, trx)).map((member) => member.user_id);
        await deleteLocked(groupId, ids, trx, onCommit, { request, actorId: userId });
        return ids;
      });
      await committed();
      await membersChanged(groupId, memberIds);
    },

    /** GET /v1/groups/{id}/members (members), longest-standing first, with usernames (never addresses). */
    async members(userId: string, groupId: string, page: Page) {
      await requireMember(groupId, userId);
      const { rows, total } = await repo.pageOfMembers(groupId, page.limit, page.offset);
      const names = await deps.users.usernamesOf(rows.map((row) => row.user_id));
      return {
        rows: rows.map((row) => ({ ...row, username: names.get(row.user_id) ?? '' })),
        total,
      };
    },

    /** PATCH /v1/groups/{id}/members/{user_id} (its admins): who administers it; a group keeps at least one admin. */
    async setAdmin(request: FastifyRequest, userId: string, groupId: string, memberId: string, isAdmin: boolean) {
      const member = await db.transaction().execute(async (trx) => {
        await lockAsAdmin(groupId, userId, trx);
        const roster = await repo.roster(groupId, trx);
        const found = roster.find((row) => row.user_id === memberId);
        if (!found) throw GroupErrors.member_not_found();
        if (found.is_admin === isAdmin) return found;
        if (!isAdmin && roster.filter((row) => row.is_admin).length === 1) throw GroupErrors.last_admin();
        await repo.setAdmin(groupId, memberId, isAdmin, trx);
        await record(
          request,
          {
            eventType: 'group_admin_changed',
            userId: memberId,
            actorId: userId,
            resourceType: 'group',
            resourceId: groupId,
            metadata: { is_admin: isAdmin },
          },
          trx,
        );
        return { ...found, is_admin: isAdmin };
      });
      // After the commit: the embedded database has one connection, which the transaction held.
      return memberView(member);
    },

    /**
     * DELETE /v1/groups/{id}/members/{user_id}: a member leaves (their own id) or an admin removes someone. The
     * last admin cannot leave while others remain; the last member leaving deletes the group.
     */
    async removeMember(request: FastifyRequest, userId: string, groupId: string, memberId: string): Promise<void> {
      const { onCommit, committed } = afterCommit();
      await db.transaction().execute(async (trx) => {
        if (!(await repo.lock(groupId, trx))) throw GroupErrors.not_found();
        const caller = await requireMember(groupId, userId, trx);
        const roster = await repo.roster(groupId, trx);
        if (memberId === userId) {
          const others = roster.filter((row) => row.user_id !== userId);
          if (caller.is_admin && others.length > 0 && !others.some((row) => row.is_admin))
            throw GroupErrors.last_admin();
          if (others.length === 0) {
            await deleteLocked(groupId, [userId], trx, onCommit, {
              request,
              actorId: userId,
              reason: 'last_member_left',
            });
          } else {
            await repo.removeMember(groupId, userId, trx);
          }
          await record(
            request,
            { eventType: 'group_member_left', userId, actorId: userId, resourceType: 'group', resourceId: groupId },
            trx,
          );
          return;
        }
        if (!caller.is_admin) throw GroupErrors.admin_required();
        if (!roster.some((row) => row.user_id === memberId)) throw GroupErrors.member_not_found();
        await repo.removeMember(groupId, memberId, trx);
        await record(
          request,
          {
            eventType: 'group_member_removed',
            userId: memberId,
            actorId: userId,
            resourceType: 'group',
            resourceId: groupId,
          },
          trx,
        );
      });
      await committed();
      await membersChanged(groupId, [memberId]);
    },

    /**
     * POST /v1/groups/{id}/invitations (its admins): `{ username }` or `{ email }`. An address of a registered
     * user invites that user, an address of nobody waits for someone to register with it; the answer is the
     * same either way and never says which (nor whether the address belongs to a member already).
     */
    async invite(request: FastifyRequest, userId: string, groupId: string, input: InviteInput) {
      if ((input.username === undefined) === (input.email === undefined)) throw GroupErrors.invitee_required();
      const email = input.email === undefined ? null : normaliseEmail(input.email);
      const username = input.username?.trim().toLowerCase();
      let mailTo: { address: string; user?: { id: string } } | undefined;
      const { invitation, groupName } = await db.transaction().execute(async (trx) => {
        await lockAsAdmin(groupId, userId, trx);
        const now = clock.now();
        await repo.expireDue(groupId, now, trx);
        if ((await repo.countPending(groupId, now, trx)) >= MAX_PENDING_INVITATIONS) {
          throw GroupErrors.too_many_invitations();
        }
        let inviteeId: string | null = null;
        if (username !== undefined) {
          const user = await deps.users.findByUsername(username, trx);
          if (!user) throw GroupErrors.invitee_not_found();
          if (await repo.membership(groupId, user.id, trx)) throw GroupErrors.already_member();
          inviteeId = user.id;
        } else {
          const account = await deps.users.findEmailAccount(email!, trx);
          inviteeId = account?.user_id ?? null;
          // A member invited by address is not told apart: the invitation stands, unmailed, and accepting it changes nothing.
          const member = inviteeId !== null && (await repo.membership(groupId, inviteeId, trx));
          if (!member) mailTo = { address: email!, ...(inviteeId && { user: { id: inviteeId } }) };
        }
        const created = await repo.insertInvitation(
          {
            group_id: groupId,
            invited_by: userId,
            user_id: inviteeId,
            email,
            created_at: now,
            expires_at: new Date(now.getTime() + INVITATION_LIFETIME_MS),
          },
          trx,
        );
        await record(
          request,
          {
            eventType: 'group_invitation_sent',
            userId,
            actorId: userId,
            resourceType: 'group_invitation',
            resourceId: created.id,
            // An invitation by address names no user: the inviter's own log must not say whose address it is.
            metadata: {
              group_id: groupId,
              by: email === null ? 'username' : 'email',
              ...(email === null && { invitee_id: inviteeId }),
            },
          },
          trx,
        );
        return { invitation: created, groupName: (await repo.nameOf(groupId, trx))! };
      });
      if (username !== undefined) mailTo = { address: '', user: { id: invitation.user_id! } };
      if (mailTo) await mailInvitation(request, userId, groupName, invitation, mailTo);
      return (await invitationViews([invitation]))[0]!;
    },

    /** GET /v1/groups/{id}/invitations (its admins): the pending ones, newest first. */
    async invitationsOf(userId: string, groupId: string) {
      await requireAdmin(groupId, userId, db);
      return invitationViews(await repo.pendingOfGroup(groupId, clock.now()));
    },

    /** DELETE /v1/groups/{id}/invitations/{invitation_id} (its admins): withdraws a pending invitation. */
    async withdraw(request: FastifyRequest, userId: string, groupId: string, invitationId: string): Promise<void> {
      await db.transaction().execute(async (trx) => {
        await lockAsAdmin(groupId, userId, trx);
        const invitation = await repo.pendingOfGroupById(groupId, invitationId, trx);
        if (!invitation || statusAt(invitation, clock.now()) !== 'pending') throw GroupErrors.invitation_not_found();
        await repo.deleteInvitation(invitationId, trx);
        await record(
          request,
          {
            eventType: 'group_invitation_withdrawn',
            userId,
            actorId: userId,
            resourceType: 'group_invitation',
            resourceId: invitationId,
            metadata: { group_id: groupId },
          },
          trx,
        );
      });
    },

    /** GET /v1/invitations: the caller's pending invitations, newest first. */
    async invitationsTo(userId: string, page: Page) {
      const { rows, total } = await repo.pageOfUserInvitations(userId, clock.now(), page.limit, page.offset);
      return { rows: await myInvitationViews(rows), total };
    },

    /** POST /v1/invitations/{id}/accept: the invitee joins the group (not as admin). */
    accept: (request: FastifyRequest, userId: string, invitationId: string) =>
      answer(request, userId, invitationId, 'accepted'),
    /** POST /v1/invitations/{id}/decline. */
    decline: (request: FastifyRequest, userId: string, invitationId: string) =>
      answer(request, userId, invitationId, 'declined'),

    // For the tracking context (sharing with a group), through a port it declares.

    /** The ids of the groups the user is a member of (one query). */
    groupIdsOf: (userId: string): Promise<string[]> => repo.groupIdsOf(userId),
    /** The ids of the group's members (none for an unknown group). */
    memberIdsOf: async (groupId: string): Promise<string[]> =>
      (await repo.roster(groupId)).map((member) => member.user_id),
    isMember: async (groupId: string, userId: string): Promise<boolean> =>
      Boolean(await repo.membership(groupId, userId)),
    /** Group names by id (a share names its group). */
    namesOf: repo.namesOf,

    // Reactions (src/reactions.ts).

    /**
     * `user.registering`: a new user confirmed an address; the pending invitations to it become theirs and are
     * accepted for them (they proved the mailbox the invitation was sent to), in the registration's transaction.
     */
    async registering({ userId, email, trx, onCommit }: { userId: string; email: string } & TransactionalEvent) {
      const now = clock.now();
      const claimed = await repo.claimByEmail(email, userId, now, trx);
      let accepted = 0;
      for (const invitation of claimed) {
        await repo.lock(invitation.group_id, trx);
        if (await repo.membership(invitation.group_id, userId, trx)) continue;
        // Beyond the bound the invitation stays pending: the user sees it and may leave a group to accept it.
        if ((await repo.countGroupsOf(userId, trx)) >= MAX_GROUPS_PER_USER) continue;
        await repo.addMember({ group_id: invitation.group_id, user_id: userId, is_admin: false, joined_at: now }, trx);
        await repo.answer({ id: invitation.id, group_id: invitation.group_id, user_id: userId }, 'accepted', now, trx);
        await record(
          null,
          {
            eventType: 'group_invitation_accepted',
            userId,
            actorId: userId,
            resourceType: 'group_invitation',
            resourceId: invitation.id,
            metadata: { group_id: invitation.group_id, automatic: true },
          },
          trx,
        );
        onCommit(() => membersChanged(invitation.group_id, [userId]) ?? Promise.resolve());
        accepted++;
      }
      return { group_invitations_accepted: accepted };
    },

    /**
     * `user.purging`: the user's memberships go with their row (cascade). A group they were the last admin of
     * gets its longest-standing other member as admin; a group they were the only member of is deleted.
     */
    async purging({ userId, trx, onCommit }: { userId: string } & TransactionalEvent) {
      const rosters = await repo.rostersOfUser(userId, trx);
      for (const [groupId, roster] of rosters) {
        const self = roster.find((row) => row.user_id === userId)!;
        const others = roster.filter((row) => row.user_id !== userId);
        if (others.length === 0) {
          // Nobody is named: the user is being removed, and their events are pseudonymised in this transaction.
          await deleteLocked(groupId, [userId], trx, onCommit, {
            request: null,
            actorId: null,
            reason: 'last_member_purged',
          });
        } else if (self.is_admin && !others.some((row) => row.is_admin)) {
          const successor = others[0]!;
          await repo.setAdmin(groupId, successor.user_id, true, trx);
          await record(
            null,
            {
              eventType: 'group_admin_changed',
              userId: successor.user_id,
              resourceType: 'group',
              resourceId: groupId,
              metadata: { is_admin: true, reason: 'last_admin_purged' },
            },
            trx,
          );
        }
        onCommit(() => membersChanged(groupId, [userId]) ?? Promise.resolve());
      }
      return { group_memberships_ended: rosters.size };
    },
  };

  /** The invitation's mail: to a registered invitee where they answer it, else a link to sign up with the address. */
  async function mailInvitation(
    request: FastifyRequest,
    inviterId: string,
    groupName: string,
    invitation: InvitationRow,
    to: { address: string; user?: { id: string } },
  ): Promise<void> {
    const inviter = await deps.contactOf(inviterId);
    const details = { inviter: inviter?.username ?? '?', group: groupName, expiresAt: invitation.expires_at };
    if (to.user) {
      const invitee = await deps.contactOf(to.user.id);
      const address = invitee?.email;
      if (!invitee || !address) return;
      await mail(
        address,
        invitationMail(invitee.locale, invitee.username, {
          ...details,
          timeZone: invitee.timeZone,
          link: deps.invitationsUrl,
        }),
      );
      return;
    }
    const link = new URL(linkBaseUrl(request) + SIGN_UP_PATH);
    link.searchParams.set('email', to.address);
    await mail(
      to.address,
      signUpInvitationMail(inviter?.locale ?? null, to.address, { ...details, link: link.toString() }),
    );
  }
}

export type GroupsService = ReturnType<typeof createGroupsService>;
