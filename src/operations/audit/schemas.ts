import { Type } from 'typebox';
import { AUDIT_EVENT_TYPES, AUDIT_SOURCES, EXTRA_AUDIT_EVENT_TYPES } from '../../platform/audit.js';
import { PageLinks } from '../../platform/http/envelopes.js';
import { Body, DateTime, named, Nullable, Uuid } from '../../platform/http/schemas.js';

/** One of these strings (a plain `enum`: one check for the validator and the serialiser). */
const literals = <T extends string>(values: readonly T[]) => Type.Unsafe<T>({ type: 'string', enum: [...values] });

export const AuditStatus = literals(['success', 'failure']);
export const AuditSource = literals(AUDIT_SOURCES);
export const EventType = literals([...AUDIT_EVENT_TYPES, ...EXTRA_AUDIT_EVENT_TYPES]);
export const ReportReason = literals(['not_me', 'suspicious', 'unknown_device', 'unknown_location', 'other']);
export const ReportStatus = literals(['pending', 'reviewed', 'resolved', 'dismissed']);

const LocationField = (description: string) =>
  Type.Optional(Type.String({ description: `${description}; absent without a GeoIP database` }));

export const AuditEvent = named(
  'AuditEvent',
  Type.Object(
    {
      id: Uuid,
      user_id: Nullable(Type.String()),
      event_type: Type.String(),
      resource_type: Nullable(Type.String()),
      resource_id: Nullable(Type.String()),
      actor_id: Nullable(Type.String({ description: 'Who acted, when not the user' })),
      ip_address: Nullable(Type.String()),
      user_agent: Nullable(Type.String()),
      description: Nullable(Type.String()),
      metadata: Type.Record(Type.String(), Type.Unknown()),
      status: AuditStatus,
      error_message: Nullable(Type.String()),
      country_code: LocationField('ISO 3166-1 alpha-2'),
      country_name: LocationField('Country'),
      city: LocationField('City'),
      region: LocationField('Region (first subdivision)'),
      source_service: Type.String(),
      created_at: DateTime,
      is_reported: Type.Boolean(),
    },
    {
      examples: [
        {
          id: '6f1c2d3e-4a5b-4c6d-8e7f-901234567890',
          user_id: '0b8e9f10-1a2b-4c3d-9e4f-5a6b7c8d9e0f',
          event_type: 'login',
          resource_type: 'session',
          resource_id: '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d',
          actor_id: null,
          ip_address: '203.0.113.9',
          user_agent: 'Mozilla/5.0',
          description: null,
          metadata: { provider: 'email' },
          status: 'success',
          error_message: null,
          country_code: 'DE',
          country_name: 'Germany',
          city: 'Berlin',
          region: 'Land Berlin',
          source_service: 'api',
          created_at: '2026-11-25T09:30:00.000Z',
          is_reported: false,
        },
      ],
    },
  ),
);

export const AuditList = Type.Object({
  events: Type.Array(AuditEvent),
  total_count: Type.Integer(),
  page: Type.Integer(),
  limit: Type.Integer(),
  total_pages: Type.Integer(),
  _links: PageLinks,
});

const PageFields = {
  page: Type.Integer({ minimum: 1, default: 1 }),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
};

const EventFilters = {
  event_type: Type.Optional(Type.String({ maxLength: 60 })),
  resource_type: Type.Optional(Type.String({ maxLength: 60 })),
  status: Type.Optional(AuditStatus),
};

export const UserAuditQuery = Type.Object({ ...PageFields, ...EventFilters });

export const SORT_FIELDS = ['event_type', 'user_id', 'status', 'created_at'] as const;

export const AdminAuditQuery = Type.Object({
  ...PageFields,
  ...EventFilters,
  user_id: Type.Optional(Type.String({ maxLength: 255 })),
  user_search: Type.Optional(
    Type.String({ minLength: 1, maxLength: 320, description: 'A user id, username or email' }),
  ),
  source_service: Type.Optional(AuditSource),
  start_date: Type.Optional(Type.String({ maxLength: 40, description: 'ISO 8601 date or date-time (inclusive)' })),
  end_date: Type.Optional(
    Type.String({ maxLength: 40, description: 'ISO 8601 date or date-time (inclusive; a date means the whole day)' }),
  ),
  sort_field: Type.Optional(literals(SORT_FIELDS)),
  sort_direction: Type.Optional(literals(['asc', 'desc'])),
  is_reported: Type.Optional(Type.Boolean()),
});

export const UserIdParams = Type.Object({ user_id: Uuid });
export const EventIdParams = Type.Object({ event_id: Uuid });
export const ReportIdParams = Type.Object({ report_id: Uuid });

export const AuditReport = named(
  'AuditReport',
  Type.Object(
    {
      id: Uuid,
      audit_event_id: Uuid,
      user_id: Uuid,
      reason: ReportReason,
      description: Nullable(Type.String()),
      status: ReportStatus,
      reviewed_by: Nullable(Uuid),
      reviewed_at: Nullable(DateTime),
      resolution_notes: Nullable(Type.String()),
      created_at: DateTime,
      updated_at: DateTime,
    },
    {
      examples: [
        {
          id: '2b3c4d5e-6f70-4a1b-8c2d-3e4f5a6b7c8d',
          audit_event_id: '6f1c2d3e-4a5b-4c6d-8e7f-901234567890',
          user_id: '0b8e9f10-1a2b-4c3d-9e4f-5a6b7c8d9e0f',
          reason: 'not_me',
          description: 'I was asleep',
          status: 'resolved',
          reviewed_by: '7d6c5b4a-3f2e-4d1c-8b0a-9f8e7d6c5b4a',
          reviewed_at: '2026-11-26T08:00:00.000Z',
          resolution_notes: 'Password reset enforced',
          created_at: '2026-11-25T09:40:00.000Z',
          updated_at: '2026-11-26T08:00:00.000Z',
        },
      ],
    },
  ),
);

export const ReportBody = Body(
  {
    reason: ReportReason,
    description: Type.Optional(Nullable(Type.String({ maxLength: 2000 }))),
  },
  { example: { reason: 'not_me', description: 'I was asleep at that time' } },
);

export const ReportFiled = Type.Object({
  success: Type.Boolean(),
  report: Nullable(AuditReport),
  error: Nullable(Type.String()),
});

export const AdminReportsQuery = Type.Object({
  status: Type.Optional(ReportStatus),
  limit: Type.Integer({ minimum: 1, maximum: 1000, default: 500, description: 'Newest first; at most 1000' }),
  offset: Type.Integer({ minimum: 0, default: 0 }),
});

export const ReviewReportBody = Body(
  {
    status: Type.Optional(ReportStatus),
    resolution_notes: Type.Optional(Nullable(Type.String({ maxLength: 4000 }))),
  },
  { atLeastOne: true, example: { status: 'resolved', resolution_notes: 'Password reset and sessions ended' } },
);

export const InternalAuditBody = Body(
  {
    event_type: EventType,
    user_id: Type.Optional(
      Nullable(
        Type.String({
          minLength: 1,
          maxLength: 255,
          description: 'A user id; bots (source_service other than api) may send an external id',
        }),
      ),
    ),
    actor_id: Type.Optional(Nullable(Uuid)),
    resource_type: Type.Optional(Nullable(Type.String({ maxLength: 60 }))),
    resource_id: Type.Optional(Nullable(Type.String({ maxLength: 255 }))),
    status: Type.Optional(AuditStatus),
    source_service: Type.Optional(AuditSource),
    description: Type.Optional(Nullable(Type.String({ maxLength: 2000 }))),
    error_message: Type.Optional(Nullable(Type.String({ maxLength: 2000 }))),
    metadata: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { maxProperties: 100 })),
    ip_address: Type.Optional(
      Nullable(Type.String({ maxLength: 64, description: "The end user's address, when the app reports for them" })),
    ),
    user_agent: Type.Optional(Nullable(Type.String({ maxLength: 1024 }))),
  },
  {
    example: {
      event_type: 'bot_command_executed',
      user_id: '3f1c2a9e-8b7d-4c5e-9a1f-2b3c4d5e6f70',
      status: 'success',
      source_service: 'community_bot',
      description: '!trip status',
    },
  },
);
