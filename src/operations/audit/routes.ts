import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { internalAppOfKey, AppAssertionErrors, type InternalApp } from '../../platform/auth/app-assertion.js';
import { callerOf, requireOwnAccount, requirePermission } from '../../platform/auth/hooks.js';
import { errorResponses, locateCreated, paginated, sayIfEstimated } from '../../platform/http/envelopes.js';
import { AuthErrors } from '../../platform/http/errors.js';
import { AuditErrors, AuditReportErrors } from './errors.js';
import {
  AdminAuditQuery,
  AdminReportsQuery,
  AuditEvent,
  AuditList,
  AuditReport,
  EventIdParams,
  InternalAuditBody,
  ReportBody,
  ReportFiled,
  ReportIdParams,
  ReviewReportBody,
  UserAuditQuery,
  UserIdParams,
} from './schemas.js';
import type { AuditService } from './service.js';

const tags = ['Audit'];

/**
 * The interface's list shape: `{ events, total_count, page, limit, total_pages, _links }`. A total beyond
 * COUNT_EXACT_UP_TO is PostgreSQL's estimate; the response then says so in `X-Total-Count-Estimated`.
 */
function auditList<T>(
  request: FastifyRequest,
  reply: FastifyReply,
  list: { rows: T[]; total: number; estimated: boolean },
  page: { page: number; limit: number },
) {
  const { rows, total } = list;
  sayIfEstimated(reply, list.estimated);
  const { pagination, _links } = paginated(request, rows, total, page);
  return {
    events: rows,
    total_count: total,
    page: page.page,
    limit: page.limit,
    total_pages: pagination.total_pages,
    _links,
  };
}

export async function auditRoutes(fastify: FastifyInstance, { audit }: { audit: AuditService }): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/v1/users/me/audit',
    {
      config: { auth: requireOwnAccount('audit:read_own') },
      schema: {
        tags,
        summary: 'Your own activity log, newest first',
        querystring: UserAuditQuery,
        response: { 200: AuditList, ...errorResponses(AuthErrors.user_required) },
      },
    },
    async (request, reply) =>
      auditList(request, reply, await audit.ofCaller(callerOf(request), request.query), request.query),
  );

  app.get(
    '/v1/users/:user_id/audit',
    {
      config: { auth: requirePermission('audit:read') },
      schema: {
        tags,
        summary: "A user's activity log, newest first",
        params: UserIdParams,
        querystring: UserAuditQuery,
        response: { 200: AuditList },
      },
    },
    async (request, reply) =>
      auditList(request, reply, await audit.ofUser(request.params.user_id, request.query), request.query),
  );

  app.get(
    '/v1/admin/audit',
    {
      config: { auth: requirePermission('audit:read') },
      schema: {
        tags,
        summary: 'The whole activity log, filtered and sorted',
        description:
          'user_search finds the user by id, username or email. start_date and end_date are inclusive; a date ' +
          'without a time as end_date includes that whole day. Ties in the sort continue by time, then id. total_count is ' +
          "exact up to 10,000 matching events; beyond, it is PostgreSQL's estimate and the response carries X-Total-Count-Estimated: true.",
        querystring: AdminAuditQuery,
        response: { 200: AuditList, ...errorResponses(AuditErrors.invalid_date) },
      },
    },
    async (request, reply) => auditList(request, reply, await audit.admin(request.query), request.query),
  );

  app.post(
    '/v1/users/me/audit/:event_id/report',
    {
      config: { auth: requireOwnAccount('audit:report_own') },
      schema: {
        tags,
        summary: 'Report one of your own events as suspicious',
        description: "One report per event. Another user's event answers 404.",
        params: EventIdParams,
        body: ReportBody,
        response: {
          201: ReportFiled,
          ...errorResponses(AuthErrors.user_required, AuditErrors.event_not_found, AuditReportErrors.already_reported),
        },
      },
    },
    async (request, reply) => {
      const report = await audit.report(callerOf(request), request.params.event_id, request.body);
      // A report's address is where administrators review it (PATCH /v1/admin/audit/reports/{id}).
      locateCreated(request, reply, `/v1/admin/audit/reports/${report.id}`);
      return { success: true, report, error: null };
    },
  );

  app.get(
    '/v1/users/me/audit/reports',
    {
      config: { auth: requireOwnAccount('audit:read_own') },
      schema: {
        tags,
        summary: 'Your reports, newest first (bare array)',
        response: { 200: Type.Array(AuditReport), ...errorResponses(AuthErrors.user_required) },
      },
    },
    async (request) => audit.reportsOf(callerOf(request)),
  );

  app.get(
    '/v1/admin/audit/reports',
    {
      config: { auth: requirePermission('audit:read') },
      schema: {
        tags,
        summary: 'Reports, newest first (bare array)',
        querystring: AdminReportsQuery,
        response: { 200: Type.Array(AuditReport) },
      },
    },
    async (request) => audit.reports(request.query.status, request.query.limit, request.query.offset),
  );

  app.patch(
    '/v1/admin/audit/reports/:report_id',
    {
      config: { auth: requirePermission('audit:write') },
      schema: {
        tags,
        summary: 'Review a report: status and notes; the reporting user is told by mail',
        description:
          'Sets reviewed_by (you, when your credential has a user) and reviewed_at. A mail that cannot be sent is logged; the review stands.',
        params: ReportIdParams,
        body: ReviewReportBody,
        response: { 200: AuditReport, ...errorResponses(AuditReportErrors.not_found) },
      },
    },
    async (request) => audit.review(callerOf(request), request.params.report_id, request.body),
  );

  // Who sends the event is settled before the body is read: no credentials answer 401, not a validation error.
  const appOfRequest = new WeakMap<FastifyRequest, InternalApp | null>();
  app.post(
    '/v1/internal/audit',
    {
      preValidation: async (request) => {
        const key = request.headers['x-id-app-key'];
        const appOfKey = internalAppOfKey(Array.isArray(key) ? key[0] : key, request.server.config.internalAppSecrets);
        if (key && !appOfKey)
          throw AuditErrors.credentials_required('X-ID-App-Key is not the key of a configured internal app');
        if (!appOfKey && !request.caller) throw AuditErrors.credentials_required();
        appOfRequest.set(request, appOfKey);
      },
      schema: {
        tags,
        summary: 'Record an event reported by an internal app or a bot',
        description:
          "For the system key, an internal app (`X-ID-App-Key`: the app's secret) or a credential with `audit:write`. " +
          'An internal app attributes the event to an end user with `X-ID-App-Assertion` (the actor becomes its subject). ' +
          'With source_service `api` (the default for other senders), user_id must name an existing user; bots may send ' +
          'their own ids or null. actor_id, when given, must name an existing user.',
        security: [{ bearer: [] }, { appKey: [] }],
        body: InternalAuditBody,
        response: {
          201: AuditEvent,
          ...errorResponses(
            AuditErrors.unknown_user,
            AuditErrors.unknown_actor,
            AuditErrors.actor_mismatch,
            AuditErrors.credentials_required,
            AppAssertionErrors.malformed,
            AppAssertionErrors.unknown_app,
            AppAssertionErrors.bad_signature,
            AppAssertionErrors.expired,
            AppAssertionErrors.not_yet_valid,
            AppAssertionErrors.replayed,
            AuthErrors.forbidden,
            AuditErrors.actor_needs_assertion,
            AuditErrors.app_mismatch,
          ),
        },
      },
    },
    async (request, reply) =>
      reply
        .status(201)
        .send(await audit.ingest(request, request.caller, appOfRequest.get(request) ?? null, request.body)),
  );
}
