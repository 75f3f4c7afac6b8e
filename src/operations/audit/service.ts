import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { Static } from 'typebox';
import type { AuditSource } from '../../platform/audit.js';
import type { AppAssertionVerifier, InternalApp } from '../../platform/auth/app-assertion.js';
import { hasPermission, type Caller } from '../../platform/auth/caller.js';
import { missingPermission, userIdOf } from '../../platform/auth/hooks.js';
import type { Clock } from '../../platform/clock.js';
import type { Schema } from '../../platform/db/schema/index.js';
import { isUuid } from '../../platform/http/schemas.js';
import type { Mailer } from '../../platform/mail/mailer.js';
import { reportReviewedMail, type MailContact } from '../../platform/mail/messages.js';
import { AuditErrors, AuditReportErrors } from './errors.js';
import { createAuditRepo, type AuditFilters, type AuditOrder } from './repo.js';
import type { AdminAuditQuery, InternalAuditBody, ReportBody, ReviewReportBody, UserAuditQuery } from './schemas.js';
import type { createAuditWriter } from './writer.js';

/** What the activity log needs to know of users (the identity context answers). */
export interface AuditUsers {
  exists(userId: string): Promise<boolean>;
  /** Ids of the users a search term names: an id, a username or an email address. */
  idsMatching(term: string): Promise<string[]>;
  contactOf(userId: string): Promise<MailContact | undefined>;
}

interface Deps {
  db: Kysely<Schema>;
  clock: Clock;
  writer: ReturnType<typeof createAuditWriter>;
  users: AuditUsers;
  assertions: AppAssertionVerifier;
  mailer: Mailer;
  log: FastifyBaseLogger;
}

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const LOCATION_FIELDS = ['country_code', 'country_name', 'city', 'region'] as const;
const DAY_MS = 86_400_000;

type EventRow = Awaited<ReturnType<ReturnType<typeof createAuditRepo>['page']>>[number];

/** An event as the interface shows it: location fields only when known. */
function shown(row: EventRow) {
  const event: Record<string, unknown> = { ...row };
  for (const field of LOCATION_FIELDS) if (event[field] === null) delete event[field];
  return event as Omit<EventRow, (typeof LOCATION_FIELDS)[number]> &
    Partial<Record<(typeof LOCATION_FIELDS)[number], string>>;
}

/** Whether text starts with a day that exists (Date.parse takes 2026-02-31 as 3 March). */
function isCalendarDate(text: string): boolean {
  const match = /^(\d{4})-(\d{2})-(\d{2})/.exec(text);
  if (!match) return false;
  const [year, month, day] = match.slice(1).map(Number) as [number, number, number];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/** An ISO 8601 date or date-time; a bare date at the end of a range means the whole day. */
function dateOf(field: 'start_date' | 'end_date', value: string | undefined): Date | undefined {
  if (value === undefined) return undefined;
  const ms = Date.parse(value);
  if (Number.isNaN(ms) || !isCalendarDate(value))
    throw AuditErrors.invalid_date(`${field} must be an ISO 8601 date or date-time`);
  return new Date(field === 'end_date' && DATE_ONLY.test(value) ? ms + DAY_MS - 1 : ms);
}

/** How many months ahead of now audit_events always has partitions (the job runs daily, so months of slack). */
export const MONTHS_AHEAD = 3;

/** The activity log: reading it, reports on it, and events reported by internal apps and bots. */
export function createAuditService(deps: Deps) {
  const repo = createAuditRepo(deps.db);

  async function list(filters: AuditFilters, order: AuditOrder, page: { page: number; limit: number }) {
    const [rows, { total, estimated }] = await Promise.all([
      repo.page(filters, order, page.limit, (page.page - 1) * page.limit),
      repo.count(filters),
    ]);
    return { rows: rows.map(shown), total, estimated };
  }

  async function userIdsOf(query: Static<typeof AdminAuditQuery>): Promise<string[] | undefined> {
    const byId = query.user_id ? [query.user_id.toLowerCase()] : undefined;
    if (!query.user_search) return byId;
    const found = await deps.users.idsMatching(query.user_search.trim());
    return byId ? found.filter((id) => byId.includes(id)) : found;
  }

  /** Reads the sender's right to log: the system key, an internal app's key, or audit:write. */
  function mayLog(caller: Caller | null, app: InternalApp | null): { viaAppOnly: boolean } {
    if (!caller && !app) throw AuditErrors.credentials_required();
    const privileged = Boolean(caller && (caller.isSystem || hasPermission(caller, 'audit:write')));
    if (!privileged && !app) throw missingPermission('audit:write');
    return { viaAppOnly: !privileged };
  }

  /** The end user an event is attributed to, from X-ID-App-Assertion, else the (privileged) sender's actor_id. */
  async function actorOf(
    assertionHeader: string | undefined,
    app: InternalApp | null,
    viaAppOnly: boolean,
    actorId: string | null | undefined,
  ) {
    if (assertionHeader) {
      const assertion = await deps.assertions.verify(assertionHeader);
      if (app && assertion.app !== app) throw AuditErrors.app_mismatch();
      if (actorId && actorId.toLowerCase() !== assertion.subject) throw AuditErrors.actor_mismatch();
      if (!(await deps.users.exists(assertion.subject))) throw AuditErrors.unknown_actor();
      return assertion.subject;
    }
    if (!actorId) return null;
    if (viaAppOnly) throw AuditErrors.actor_needs_assertion();
    if (!(await deps.users.exists(actorId.toLowerCase()))) throw AuditErrors.unknown_actor();
    return actorId.toLowerCase();
  }

  function ofUser(userId: string, query: Static<typeof UserAuditQuery>) {
    const filters = {
      userIds: [userId.toLowerCase()],
      eventType: query.event_type,
      resourceType: query.resource_type,
      status: query.status,
    };
    return list(filters, { field: 'created_at', direction: 'desc' }, query);
  }

  return {
    ofUser,

    ofCaller: (caller: Caller, query: Static<typeof UserAuditQuery>) => ofUser(userIdOf(caller), query),

    async admin(query: Static<typeof AdminAuditQuery>) {
      const filters: AuditFilters = {
        userIds: await userIdsOf(query),
        eventType: query.event_type,
        resourceType: query.resource_type,
        status: query.status,
        sourceService: query.source_service,
        from: dateOf('start_date', query.start_date),
        to: dateOf('end_date', query.end_date),
        isReported: query.is_reported,
      };
      return list(
        filters,
        { field: query.sort_field ?? 'created_at', direction: query.sort_direction ?? 'desc' },
        query,
      );
    },

    async report(caller: Caller, eventId: string, input: Static<typeof ReportBody>) {
      const userId = userIdOf(caller);
      const report = await repo.fileReport({
        eventId,
        userId,
        reason: input.reason,
        description: input.description ?? null,
      });
      if (!report) throw AuditErrors.event_not_found();
      return report;
    },

    /** The job audit-partitions: the months up to MONTHS_AHEAD after this one that have no partition yet. */
    async addMonths() {
      const now = deps.clock.now();
      return {
        partitions_added: await repo.addMonths(
          new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + MONTHS_AHEAD, 1)),
        ),
      };
    },

    /**
     * Retention (audit.retention_days, the job audit-retention): events older than `retentionDays` go, with their
     * reports; null keeps all. `events_deleted` counts the rows deleted from the month holding the cutoff, not
     * those of the months dropped whole.
     */
    async expire(retentionDays: number | null) {
      if (retentionDays === null) return { retention_days: null, partitions_dropped: 0, events_deleted: 0 };
      const cutoff = new Date(deps.clock.nowMs() - retentionDays * 86_400_000);
      return { retention_days: retentionDays, cutoff: cutoff.toISOString(), ...(await repo.expire(cutoff)) };
    },

    /** For the removal of a user (`user.purging`): the trail stays, without what identifies them. */
    pseudonymiseUser: repo.pseudonymise,

    reportsOf: (caller: Caller) => repo.reportsOfUser(userIdOf(caller)),

    reports: repo.reports,

    /** An admin's review: status and notes, who and when; the reporting user is told by mail. */
    async review(caller: Caller, reportId: string, input: Static<typeof ReviewReportBody>) {
      const report = await repo.review(reportId, {
        ...input,
        reviewed_by: caller.userId ?? null,
        reviewed_at: deps.clock.now(),
      });
      if (!report) throw AuditReportErrors.not_found();
      await tellReporter(report).catch((err: unknown) =>
        deps.log.error({ err, report_id: report.id }, 'could not mail the report review'),
      );
      return report;
    },

    /** POST /v1/internal/audit. */
    async ingest(
      request: FastifyRequest,
      caller: Caller | null,
      app: InternalApp | null,
      input: Static<typeof InternalAuditBody>,
    ) {
      const { viaAppOnly } = mayLog(caller, app);
      const assertion = request.headers['x-id-app-assertion'];
      const actorId = await actorOf(
        Array.isArray(assertion) ? assertion[0] : assertion,
        app,
        viaAppOnly,
        input.actor_id,
      );
      const sourceService: AuditSource = input.source_service ?? app ?? 'api';
      const userId = input.user_id ?? actorId;
      // Bots keep their own ids for people; events from this API and its apps name real users.
      if (sourceService === 'api' && userId && !(isUuid(userId) && (await deps.users.exists(userId.toLowerCase())))) {
        throw AuditErrors.unknown_user();
      }
      const event = await deps.writer.write(request, {
        eventType: input.event_type,
        userId: sourceService === 'api' && userId ? userId.toLowerCase() : userId,
        actorId,
        resourceType: input.resource_type ?? undefined,
        resourceId: input.resource_id ?? undefined,
        status: input.status,
        sourceService,
        description: input.description ?? undefined,
        errorMessage: input.error_message ?? undefined,
        metadata: input.metadata,
        ...(input.ip_address !== undefined ? { ipAddress: input.ip_address } : {}),
        ...(input.user_agent !== undefined ? { userAgent: input.user_agent } : {}),
      });
      return shown({ ...event, is_reported: false });
    },
  };

  async function tellReporter(report: {
    id: string;
    user_id: string;
    status: string;
    resolution_notes: string | null;
  }) {
    const [contact, event] = await Promise.all([deps.users.contactOf(report.user_id), repo.eventOfReport(report.id)]);
    if (!contact?.email || !event) return;
    const review = {
      eventType: event.event_type,
      eventAt: event.created_at,
      timeZone: contact.timeZone,
      status: report.status,
      resolutionNotes: report.resolution_notes,
    };
    await deps.mailer.send(contact.email, reportReviewedMail(contact.locale, contact.username, review));
  }
}

export type AuditService = ReturnType<typeof createAuditService>;
