import type { DomainEventBus } from './platform/events.js';
import type { CredentialResolver } from './platform/auth/credentials.js';
import type { ApiKeysService } from './identity/api-keys/service.js';
import type { OAuthService } from './identity/oauth/service.js';
import type { GroupsService } from './identity/groups/service.js';
import type { OAuthClientsService } from './identity/oauth-clients/service.js';
import type { PasskeysService } from './identity/passkeys/service.js';
import type { SecurityNotices } from './identity/security-notices/service.js';
import type { SessionsService, SessionStore } from './identity/sessions/service.js';
import type { SharingService } from './tracking/sharing/service.js';
import type { GpsService } from './tracking/gps/service.js';
import type { AuditService } from './operations/audit/service.js';
import type { RealtimeService } from './operations/realtime/service.js';

/** The services that react to other modules' changes, each narrowed to what its reactions call. */
export interface Reacting {
  events: Pick<DomainEventBus, 'on'>;
  credentials: Pick<CredentialResolver, 'invalidate'>;
  securityNotices: Pick<SecurityNotices, 'signedIn' | 'changed' | 'deletionScheduled' | 'banned'>;
  passkeys: Pick<PasskeysService, 'removeAllOfUser'>;
  apiKeys: Pick<ApiKeysService, 'removeOwnedBy' | 'revokeAllOfUser' | 'removeAllOfUser' | 'keyHashesOf'>;
  sessions: Pick<SessionsService, 'forceLogout'>;
  sessionStore: Pick<SessionStore, 'revokeAllOfUser' | 'tokenHashesOfUser'>;
  oauth: Pick<OAuthService, 'revokeAllOfUser' | 'accessTokenHashesOf' | 'forgetProvider' | 'revokeClient'>;
  oauthClients: Pick<OAuthClientsService, 'forgetOwnedBy'>;
  groups: Pick<GroupsService, 'registering' | 'purging'>;
  auditLog: Pick<AuditService, 'pseudonymiseUser'>;
  realtime: Pick<RealtimeService, 'accessChanged' | 'pointsRecorded' | 'eventsRecorded'>;
  gps: Pick<GpsService, 'forgetLatest' | 'forgetLatestOfTrip' | 'forgetSender'>;
  sharing: Pick<SharingService, 'forgetAudienceOf' | 'endSharesOfDevice' | 'forgetUsers' | 'deviceDeleting'>;
}

/**
 * The reactions across modules to the domain events (ARCHITECTURE.md, "Events"), registered by the composition
 * root once every service exists: events ending in `ing` run inside the emitter's transaction and report what they
 * changed; work that must wait for the commit is queued with `onCommit`.
 */
export function registerReactions({
  events,
  credentials,
  securityNotices,
  passkeys,
  apiKeys,
  sessions,
  sessionStore,
  oauth,
  oauthClients,
  groups,
  auditLog,
  realtime,
  gps,
  sharing,
}: Reacting): void {
  events.on('user.signed_in', (event) => securityNotices.signedIn(event));
  events.on('user.security_changed', (change) => securityNotices.changed(change));
  events.on('user.passkeys_and_keys_removing', async ({ userId, trx, onCommit }) => ({
    passkeys_removed: await passkeys.removeAllOfUser(userId, trx),
    api_keys_removed: await apiKeys.removeOwnedBy(userId, trx, onCommit),
  }));
  events.on('user.deleting', async ({ userId, purgeAt, trx, onCommit }) => {
    onCommit(() => sessions.forceLogout(userId, 'account_deleted'));
    onCommit(async () => securityNotices.deletionScheduled(userId, purgeAt));
    return {
      sessions_revoked: await sessionStore.revokeAllOfUser(userId, trx, onCommit),
      api_keys_revoked: await apiKeys.revokeAllOfUser(userId, trx, onCommit),
      oauth_tokens_revoked: await oauth.revokeAllOfUser(userId, trx, onCommit),
    };
  });
  const forgetCredentialsOf = async (userId: string) =>
    credentials.invalidate([
      ...(await sessionStore.tokenHashesOfUser(userId)),
      ...(await apiKeys.keyHashesOf(userId)),
      ...(await oauth.accessTokenHashesOf(userId)),
    ]);
  events.on('user.roles_changed', async ({ userId }) => {
    await forgetCredentialsOf(userId);
    await realtime.accessChanged(userId);
  });
  events.on('gps.points_recorded', ({ points }) => realtime.pointsRecorded(points));
  events.on('event.recorded', ({ events: recorded }) => realtime.eventsRecorded(recorded));
  // Who reaches a device is read while its shares still exist: they go with it (on delete cascade).
  events.on('device.deleting', (event) => sharing.deviceDeleting(event));
  events.on('device.deleted', ({ deviceId }) => gps.forgetLatest(deviceId));
  events.on('device.created', ({ ownerId }) => sharing.forgetAudienceOf([ownerId]));
  // A group's shares go with it (on delete cascade); what its members reach is read anew after the commit.
  events.on('group.members_changed', ({ userIds }) => sharing.forgetUsers(userIds));
  events.on('group.deleting', ({ memberIds, onCommit }) => onCommit(() => sharing.forgetUsers(memberIds)));
  events.on('device.transferring', async ({ deviceId, fromUserId, toUserId, trx, onCommit }) => {
    await sharing.endSharesOfDevice(trx, deviceId, onCommit);
    onCommit(() => sharing.forgetAudienceOf([fromUserId, toUserId]));
  });
  events.on('trip.deleting', ({ tripId, trx, onCommit }) => gps.forgetLatestOfTrip(tripId, trx, onCommit));
  events.on('permission.created', () => oauth.forgetProvider());
  events.on('oauth_client.restricted', ({ clientId }) => oauth.revokeClient(clientId));
  events.on('user.banning', async ({ userId, reason, expiresAt, trx, onCommit }) => {
    onCommit(async () => securityNotices.banned(userId, { reason, expiresAt }));
    onCommit(async () => credentials.invalidate(await apiKeys.keyHashesOf(userId)));
    onCommit(() => sessions.forceLogout(userId, 'banned'));
    return {
      sessions_revoked: await sessionStore.revokeAllOfUser(userId, trx, onCommit),
      oauth_tokens_revoked: await oauth.revokeAllOfUser(userId, trx, onCommit),
    };
  });
  events.on('user.purging', async ({ userId, trx, onCommit }) => {
    // A force-deleted active user's open apps are told, as on a deletion (for a purge after the grace period nobody is left to tell).
    onCommit(() => sessions.forceLogout(userId, 'account_deleted'));
    return {
      sessions_ended: await sessionStore.revokeAllOfUser(userId, trx, onCommit),
      api_keys_removed: await apiKeys.removeAllOfUser(userId, trx, onCommit),
      // A force-deleted active user skipped `user.deleting`: their OAuth tokens (cached ones too) end here.
      oauth_tokens_revoked: await oauth.revokeAllOfUser(userId, trx, onCommit),
      oauth_clients_removed: await oauthClients.forgetOwnedBy(userId, trx),
      audit_events_pseudonymised: await auditLog.pseudonymiseUser(userId, trx),
      gps_points_unattributed: await gps.forgetSender(userId, trx),
    };
  });
  // A purged user's memberships go with their row; a group they were the last admin of gets another, one they were alone in goes.
  events.on('user.purging', (event) => groups.purging(event));
  // The new user proved the mailbox: pending group invitations to the address become theirs, accepted.
  events.on('user.registering', (event) => groups.registering(event));
  // Keys refused during the ban may sit in the short negative cache; re-read them now.
  events.on('user.unbanned', ({ userId }) => forgetCredentialsOf(userId));
}
