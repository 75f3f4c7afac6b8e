import type { Kysely } from 'kysely';
import type { Schema } from './db/schema/index.js';

/**
 * Domain events: how one module reacts to another's change without either importing the other.
 * The module that owns the change emits; the composition root registers the reactions at start-up.
 *
 * Events ending in `ing` run inside the emitter's transaction (`trx`), so the reactions commit or
 * roll back with the change; a reaction that throws aborts it. What must wait for the commit (dropping
 * cached credentials, telling other nodes) a reaction hands to `onCommit`; the emitter runs those
 * tasks once its transaction has committed (see `transactionalEvent`). Other events are emitted after commit.
 */
export interface DomainEvents {
  /** A user is being soft-deleted: their sessions, keys and mailed links end in the same transaction. */
  'user.deleting': { userId: string; purgeAt: Date } & TransactionalEvent;
  /**
   * A user is being removed for good (after the grace period, or forced): reactions end what is keyed
   * to them and pseudonymise what must outlive them, in the same transaction as the removal.
   */
  'user.purging': { userId: string } & TransactionalEvent;
  /**
   * A user asked, with a new password (reset or change), that every passkey and API key of theirs go too:
   * they end in the same transaction as the new password (reports `passkeys_removed`, `api_keys_removed`).
   */
  'user.passkeys_and_keys_removing': { userId: string } & TransactionalEvent;
  /** A user is being banned: their sessions end in the same transaction, cached keys are dropped after it. */
  'user.banning': { userId: string; reason: string | null; expiresAt: Date | null } & TransactionalEvent;
  /** A ban was lifted (after commit): keys of the user refused while it lasted are re-read. */
  'user.unbanned': { userId: string };
  /** Roles of a user changed (after commit): cached credentials of the user are re-read. */
  'user.roles_changed': { userId: string };
  /**
   * An OAuth client was deactivated, deleted or given other scopes (after commit): the tokens it holds
   * for any user end, so none outlives what it may now do.
   */
  'oauth_client.restricted': { clientId: string };
  /** A device was made (after commit): its owner's audience (who sees all their devices) re-reads its grants. */
  'device.created': { deviceId: string; ownerId: string | null };
  /**
   * A device is being deleted: those who reach it (its owner, the grantees of its shares and of its owner's shares
   * of every device) are read before its shares go with it, and re-read their grants after the commit.
   */
  'device.deleting': { deviceId: string; ownerId: string | null } & TransactionalEvent;
  /** A device was deleted (after commit; its points stay, without device): the latest-point cache forgets it. */
  'device.deleted': { deviceId: string };
  /** A device is changing hands: its shares (the old owner's to give) end in the same transaction. */
  'device.transferring': { deviceId: string; fromUserId: string | null; toUserId: string } & TransactionalEvent;
  /**
   * A trip is being deleted (its points stay, without trip): the cached latest points of every device that
   * logged to it, not only of the trip's device now, are forgotten after the commit.
   */
  'trip.deleting': { tripId: string } & TransactionalEvent;
  /** GPS points were stored, one or a whole batch (after commit): live subscribers are told, in one message. */
  'gps.points_recorded': { points: { point: RecordedGpsPoint; devicePublic: boolean }[] };
  /**
   * Events of devices were stored (after commit; geofence transitions, later offline, overspeed and the others):
   * each once, on the node that stored it, whatever node another copy of the same batch reached.
   */
  'event.recorded': { events: RecordedEvent[] };
  /** A user signed in with a password, a second factor or a passkey (after commit): a new browser and network is told by mail. */
  'user.signed_in': { userId: string; ipAddress: string | null; userAgent: string | null };
  /** Something the user must hear of changed on their account (after commit): the security notices mail them. */
  'user.security_changed': SecurityChange;
  /** A permission was added to the catalogue (after commit): the OAuth provider offers it as a scope. */
  'permission.created': { permission: string };
  /**
   * A user is being created from a confirmed email registration (the mailbox is proven): pending group
   * invitations to that address become the user's and are accepted, in the same transaction.
   */
  'user.registering': { userId: string; email: string } & TransactionalEvent;
  /**
   * Members joined a group, left it or were removed (after commit; also for every member when the group is
   * deleted, and for a purged user): `userIds` are the users whose membership changed, so what they may see
   * through the group is re-read.
   */
  'group.members_changed': { groupId: string; userIds: string[] };
  /**
   * A group is being deleted (by an admin, or when its last member leaves or is purged): what hangs on it (the
   * devices shared with it) ends in the same transaction. `memberIds`: its members at that moment.
   */
  'group.deleting': { groupId: string; memberIds: string[] } & TransactionalEvent;
}

/** A change on an account that its user is told of by mail (the ban and a scheduled deletion come from their own events). */
export type SecurityChange = { userId: string } & (
  | { kind: 'two_factor_enabled' | 'two_factor_disabled' }
  /** `removed`: the user asked that every passkey and API key of theirs go with the old password; how many went. */
  | { kind: 'password_changed'; removed?: { passkeys: number; api_keys: number } }
  | { kind: 'email_changed'; oldEmail: string; newEmail: string }
  | { kind: 'passkey_added' | 'passkey_removed' | 'api_key_created'; name: string }
);

/** An event row as stored (tracking/events owns the table `events`). */
export interface RecordedEvent {
  id: string;
  type: string;
  device_id: string;
  geofence_id: string | null;
  /** The geofence's owner: a user's geofence is theirs to read (null: instance-wide, or none). Not published. */
  geofence_owner_id: string | null;
  occurred_at: Date;
  source: 'server' | 'device';
  latitude: number | null;
  longitude: number | null;
  details: Record<string, unknown>;
  created_at: Date;
}

/** A stored GPS point as the API shows it (the gps module's GpsPoint schema). */
export interface RecordedGpsPoint {
  id: string;
  device_id?: string | null;
  latitude: number;
  longitude: number;
  heading: number | null;
  speed_knots: number | null;
  timestamp: Date | string;
}

export interface TransactionalEvent {
  trx: Kysely<Schema>;
  /** Queues work for after the emitter's commit; it never runs when the transaction rolls back. */
  onCommit(task: () => Promise<void>): void;
}

/**
 * For the emitter of an `ing` event: pass `onCommit` in the payload (with the transaction), and call
 * `committed()` once the transaction has committed, which runs what the reactions queued.
 */
export function afterCommit(): { onCommit: TransactionalEvent['onCommit']; committed: () => Promise<void> } {
  const tasks: (() => Promise<void>)[] = [];
  return {
    onCommit: (task) => void tasks.push(task),
    committed: async () => {
      await Promise.all(tasks.map((task) => task()));
    },
  };
}

export type DomainEventName = keyof DomainEvents;

/** The `user.signed_in` event of a sign-in request: its client's address and agent. */
export function signInOf(
  request: { ip: string; headers: { 'user-agent'?: string } },
  userId: string,
): DomainEvents['user.signed_in'] {
  return { userId, ipAddress: request.ip, userAgent: request.headers['user-agent'] ?? null };
}

/** What a reaction reports back to the emitter, e.g. `{ sessions_revoked: 3 }` for an audit event. */
export type ReactionReport = Record<string, number>;

type Reaction<K extends DomainEventName> = (
  event: DomainEvents[K],
) => Promise<ReactionReport | void> | ReactionReport | void;

export interface DomainEventBus {
  on<K extends DomainEventName>(name: K, reaction: Reaction<K>): void;
  /** Runs the reactions one after the other (they may share a transaction); their reports merged. */
  emit<K extends DomainEventName>(name: K, event: DomainEvents[K]): Promise<ReactionReport>;
}

export function createDomainEventBus(): DomainEventBus {
  const reactions = new Map<DomainEventName, Reaction<never>[]>();
  return {
    on(name, reaction) {
      reactions.set(name, [...(reactions.get(name) ?? []), reaction as Reaction<never>]);
    },
    async emit(name, event) {
      const report: ReactionReport = {};
      for (const reaction of reactions.get(name) ?? [])
        Object.assign(report, await (reaction as Reaction<typeof name>)(event));
      return report;
    },
  };
}
