import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { Schema } from './db/schema/index.js';

export type AuditEventType =
  | 'login'
  | 'login_failed'
  | 'logout'
  | 'session_created'
  | 'session_revoked'
  | 'api_key_created'
  | 'api_key_revoked'
  | 'user_created'
  | 'user_updated'
  | 'user_deleted'
  | (string & {});

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
  sourceService?: string;
}

/**
 * Writes audit events with the request's IP and user agent. Pass the
 * transaction when the event belongs to a change, so both commit together.
 * (The audit area extends this with GeoIP, reports and queries.)
 */
export function createAuditWriter(db: Kysely<Schema>) {
  return {
    async record(request: FastifyRequest | null, entry: AuditEntry, executor: Kysely<Schema> = db): Promise<void> {
      await executor
        .insertInto('audit_events')
        .values({
          event_type: entry.eventType,
          user_id: entry.userId ?? null,
          actor_id: entry.actorId ?? null,
          resource_type: entry.resourceType ?? null,
          resource_id: entry.resourceId ?? null,
          description: entry.description ?? null,
          metadata: JSON.stringify(entry.metadata ?? {}),
          status: entry.status ?? 'success',
          error_message: entry.errorMessage ?? null,
          source_service: entry.sourceService ?? 'api',
          ip_address: request?.ip ?? null,
          user_agent: request?.headers['user-agent'] ?? null,
        })
        .execute();
    },
  };
}

export type AuditWriter = ReturnType<typeof createAuditWriter>;
