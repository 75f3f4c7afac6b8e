import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { Schema } from './db/schema/index.js';

/** The event types of the interface, in its order. */
export const AUDIT_EVENT_TYPES = [
  'login',
  'login_failed',
  'logout',
  'session_created',
  'session_revoked',
  '2fa_enabled',
  '2fa_disabled',
  '2fa_verified',
  '2fa_backup_codes_regenerated',
  'password_changed',
  'password_reset_requested',
  'user_created',
  'user_updated',
  'user_deleted',
  'account_linked',
  'account_unlinked',
  'account_reconnected',
  'data_exported',
  'client_created',
  'client_updated',
  'client_secret_regenerated',
  'client_deleted',
  'consent_granted',
  'consent_revoked',
  'api_key_created',
  'api_key_revoked',
  'bot_command_executed',
  'bot_guild_configured',
] as const;

/**
 * Types beyond the interface's list: one event per changed platform setting, which the interface asks
 * for, bans being imposed and lifted, which an activity log of an identity service must show, passkeys,
 * the reset of secrets at rest, groups, and the shares and hand-overs of devices.
 */
export const EXTRA_AUDIT_EVENT_TYPES = [
  'platform_setting_changed',
  'user_banned',
  'user_unbanned',
  // Passkeys (WebAuthn): each change of a user's credentials, and an authenticator whose counter went back.
  'passkey_added',
  'passkey_renamed',
  'passkey_removed',
  'passkey_clone_suspected',
  // `waygate secrets reset`: the key of secrets at rest was lost, and what it sealed was forgotten.
  'secrets_reset',
  // Groups (issue 43): each step of a group's life, its invitations and its members.
  'group_created',
  'group_updated',
  'group_deleted',
  'group_invitation_sent',
  'group_invitation_withdrawn',
  'group_invitation_accepted',
  'group_invitation_declined',
  'group_member_removed',
  'group_member_left',
  'group_admin_changed',
  // Devices (issue 43): a share made (or changed by sharing again), changed, ended; a device handed to another user.
  'device_shared',
  'device_share_changed',
  'device_share_ended',
  'device_transferred',
] as const;

export type AuditEventType = (typeof AUDIT_EVENT_TYPES)[number] | (typeof EXTRA_AUDIT_EVENT_TYPES)[number];

/** Where an event comes from: this API, an internal app, or a bot. */
export const AUDIT_SOURCES = ['api', 'id', 'backend', 'policies', 'community_bot', 'stream_bot'] as const;
export type AuditSource = (typeof AUDIT_SOURCES)[number];

/** A source named by a caller (X-Source-Service), if it is one of the known sources. */
export function auditSourceOf(name: string | null | undefined): AuditSource | undefined {
  return (AUDIT_SOURCES as readonly string[]).includes(name ?? '') ? (name as AuditSource) : undefined;
}

export interface AuditEntry {
  eventType: AuditEventType;
  userId?: string | null;
  actorId?: string | null;
  resourceType?: string;
  resourceId?: string;
  description?: string;
  metadata?: Record<string, unknown>;
  status?: 'success' | 'failure';
  errorMessage?: string;
  sourceService?: AuditSource;
  /** The end user's address and client when an app reports for them; else the request's own. */
  ipAddress?: string | null;
  userAgent?: string | null;
}

/**
 * The port every module writes the activity log through (the audit module implements it). Pass the
 * transaction when the event belongs to a change, so both commit together.
 */
export interface AuditWriter {
  record(request: FastifyRequest | null, entry: AuditEntry, executor?: Kysely<Schema>): Promise<void>;
}
