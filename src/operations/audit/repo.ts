import { sql, type ExpressionBuilder, type Kysely, type SelectQueryBuilder } from 'kysely';
import type { AuditReportReason, AuditReportStatus, Schema } from '../../platform/db/schema/index.js';
import type { SORT_FIELDS } from './schemas.js';
import { cappedCount, type Total } from '../../platform/db/count.js';

export interface AuditFilters {
  /** Events of these users only (an empty list matches nothing). */
  userIds?: string[];
  eventType?: string;
  resourceType?: string;
  status?: 'success' | 'failure';
  sourceService?: string;
  from?: Date;
  to?: Date;
  isReported?: boolean;
}

export interface AuditOrder {
  field: (typeof SORT_FIELDS)[number];
  direction: 'asc' | 'desc';
}

const EVENT_COLUMNS = [
  'audit_events.id',
  'audit_events.user_id',
  'audit_events.event_type',
  'audit_events.resource_type',
  'audit_events.resource_id',
  'audit_events.actor_id',
  'audit_events.ip_address',
  'audit_events.user_agent',
  'audit_events.description',
  'audit_events.metadata',
  'audit_events.status',
  'audit_events.error_message',
  'audit_events.country_code',
  'audit_events.country_name',
  'audit_events.city',
  'audit_events.region',
  'audit_events.source_service',
  'audit_events.created_at',
] as const;

const REPORT_COLUMNS = [
  'id',
  'audit_event_id',
  'user_id',
  'reason',
  'description',
  'status',
  'reviewed_by',
  'reviewed_at',
  'resolution_notes',
  'created_at',
  'updated_at',
] as const;

type Events = SelectQueryBuilder<Schema, 'audit_events', object>;

const reportOf = (eb: ExpressionBuilder<Schema, 'audit_events'>) =>
  eb
    .selectFrom('audit_reports')
    .select(sql<number>`1`.as('one'))
    .whereRef('audit_reports.audit_event_id', '=', 'audit_events.id');

function filtered(query: Events, filters: AuditFilters): Events {
  let q = query;
  if (filters.userIds)
    q = filters.userIds.length ? q.where('audit_events.user_id', 'in', filters.userIds) : q.where(sql<boolean>`false`);
  if (filters.eventType) q = q.where('audit_events.event_type', '=', filters.eventType);
  if (filters.resourceType) q = q.where('audit_events.resource_type', '=', filters.resourceType);
  if (filters.status) q = q.where('audit_events.status', '=', filters.status);
  if (filters.sourceService) q = q.where('audit_events.source_service', '=', filters.sourceService);
  if (filters.from) q = q.where('audit_events.created_at', '>=', filters.from);
  if (filters.to) q = q.where('audit_events.created_at', '<=', filters.to);
  if (filters.isReported !== undefined)
    q = q.where((eb) => (filters.isReported ? eb.exists(reportOf(eb)) : eb.not(eb.exists(reportOf(eb)))));
  return q;
}

/** The reads of events whose plans must stay index scans at any size (query-plans.test.ts), as queries. */
export function auditQueries(db: Kysely<Schema>) {
  return {
    page(filters: AuditFilters, order: AuditOrder, limit: number, offset: number) {
      let query = filtered(db.selectFrom('audit_events'), filters)
        .select(EVENT_COLUMNS)
        .select((eb) => eb.exists(reportOf(eb)).$castTo<boolean>().as('is_reported'))
        .orderBy(`audit_events.${order.field}`, order.direction);
      // Ties (and every sort but time) continue by time, then id, so pages never overlap.
      if (order.field !== 'created_at') query = query.orderBy('audit_events.created_at', order.direction);
      return query.orderBy('audit_events.id', order.direction).limit(limit).offset(offset);
    },

    /** By id alone (all a caller has): each month's primary-key index is probed, since the id carries no time. */
    eventOfUser: (eventId: string, userId: string) =>
      db
        .selectFrom('audit_events')
        .select(['id', 'created_at'])
        .where('id', '=', eventId)
        .where('user_id', '=', userId),

    /** The event a report names, by the whole key the report keeps: one month's index. */
    eventOfReport: (reportId: string) =>
      db
        .selectFrom('audit_reports')
        .innerJoin('audit_events', (join) =>
          join
            .onRef('audit_events.id', '=', 'audit_reports.audit_event_id')
            .onRef('audit_events.created_at', '=', 'audit_reports.audit_event_created_at'),
        )
        .select(['audit_events.event_type', 'audit_events.created_at'])
        .where('audit_reports.id', '=', reportId),
  };
}

/** SQL of the activity log and its reports. */
export function createAuditRepo(db: Kysely<Schema>) {
  const queries = auditQueries(db);
  return {
    /**
     * Adds the monthly partitions up to the month holding `until` that are missing (migration 0038's function:
     * DDL on partitions, which no query builder expresses). How many it added.
     */
    addMonths: async (until: Date): Promise<number> =>
      db
        .transaction()
        .execute(
          async (trx) =>
            (await sql<{ added: number }>`select audit_events_extend(${until}) as added`.execute(trx)).rows[0]!.added,
        ),

    /** Removes the events before `cutoff` and their reports: whole months by dropping partitions, the rest by deleting rows. */
    expire: async (cutoff: Date) =>
      db.transaction().execute(async (trx) => {
        const { rows } = await sql<{
          partitions_dropped: number;
          events_deleted: string;
        }>`select * from audit_events_expire(${cutoff})`.execute(trx);
        return { partitions_dropped: rows[0]!.partitions_dropped, events_deleted: Number(rows[0]!.events_deleted) };
      }),

    /** Strips what identifies a person (address, client, place) from the events of a user or by them. */
    async pseudonymise(userId: string, trx: Kysely<Schema>): Promise<number> {
      const rows = await trx
        .updateTable('audit_events')
        .set({ ip_address: null, user_agent: null, country_code: null, country_name: null, city: null, region: null })
        .where((eb) => eb.or([eb('user_id', '=', userId), eb('actor_id', '=', userId)]))
        .returning('id')
        .execute();
      return rows.length;
    },

    page: (filters: AuditFilters, order: AuditOrder, limit: number, offset: number) =>
      queries.page(filters, order, limit, offset).execute(),

    /** How many events match: exact up to COUNT_EXACT_UP_TO, beyond that PostgreSQL's estimate (platform/db/count.ts). */
    count: (filters: AuditFilters): Promise<Total> =>
      cappedCount(db, filtered(db.selectFrom('audit_events'), filters).select(sql<number>`1`.as('one'))),

    /** The event a report names. */
    eventOfReport: (reportId: string) => queries.eventOfReport(reportId).executeTakeFirst(),

    /**
     * Files the user's report on their event; undefined when it is not theirs (or not there). The event's key is
     * copied in SQL: its created_at has microseconds, which a JavaScript Date would lose.
     */
    fileReport: (input: { eventId: string; userId: string; reason: AuditReportReason; description: string | null }) =>
      db
        .insertInto('audit_reports')
        .columns(['audit_event_id', 'audit_event_created_at', 'user_id', 'reason', 'description'])
        .expression(
          queries
            .eventOfUser(input.eventId, input.userId)
            .select([
              sql<string>`cast(${input.userId} as uuid)`.as('user_id'),
              sql<string>`${input.reason}`.as('reason'),
              sql<string | null>`${input.description}`.as('description'),
            ]),
        )
        .returning(REPORT_COLUMNS)
        .executeTakeFirst(),

    reportsOfUser: (userId: string) =>
      db
        .selectFrom('audit_reports')
        .select(REPORT_COLUMNS)
        .where('user_id', '=', userId)
        .orderBy('created_at', 'desc')
        .orderBy('id')
        .execute(),

    reports: (status: AuditReportStatus | undefined, limit: number, offset: number) => {
      let query = db.selectFrom('audit_reports').select(REPORT_COLUMNS);
      if (status) query = query.where('status', '=', status);
      return query.orderBy('created_at', 'desc').orderBy('id').limit(limit).offset(offset).execute();
    },

    review: (
      reportId: string,
      changes: {
        status?: AuditReportStatus;
        resolution_notes?: string | null;
        reviewed_by: string | null;
        reviewed_at: Date;
      },
    ) =>
      db
        .updateTable('audit_reports')
        .set({ ...changes, updated_at: changes.reviewed_at })
        .where('id', '=', reportId)
        .returning(REPORT_COLUMNS)
        .executeTakeFirst(),
  };
}

export type AuditRepo = ReturnType<typeof createAuditRepo>;
