import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { AuditEntry, AuditWriter } from '../../platform/audit.js';
import type { Schema } from '../../platform/db/schema/index.js';
import type { Locate } from '../../platform/geoip.js';

/**
 * The activity log's only writer: every module records through the platform's AuditWriter port,
 * which this implements. An event carries the request's address and client unless the entry names
 * the end user's (an app reporting for them), and their location when a GeoIP database is configured.
 */
export function createAuditWriter(db: Kysely<Schema>, locate?: Locate) {
  /** Inserts the event; returns it as stored. */
  function write(request: FastifyRequest | null, entry: AuditEntry, executor: Kysely<Schema> = db) {
    const ip = entry.ipAddress !== undefined ? entry.ipAddress : (request?.ip ?? null);
    const location = ip && locate ? locate(ip) : undefined;
    return executor
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
        ip_address: ip,
        user_agent: entry.userAgent !== undefined ? entry.userAgent : (request?.headers['user-agent'] ?? null),
        country_code: location?.country_code ?? null,
        country_name: location?.country_name ?? null,
        city: location?.city ?? null,
        region: location?.region ?? null,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  const writer: AuditWriter & { write: typeof write } = {
    write,
    async record(request, entry, executor) {
      await write(request, entry, executor);
    },
  };
  return writer;
}
