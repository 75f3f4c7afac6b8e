import { Type } from 'typebox';
import { SelfLinks } from '../../platform/http/envelopes.js';
import { DateTime, named, Nullable } from '../../platform/http/schemas.js';

export const Uptime = Type.Object({
  days: Type.Integer(),
  hours: Type.Integer(),
  minutes: Type.Integer(),
  seconds: Type.Integer(),
  total: Type.Number({ description: 'Seconds since the process started' }),
});

export const ServiceCheck = Type.Object({
  status: Type.Union([Type.Literal('up'), Type.Literal('down')]),
  responseTime: Type.Number({ description: 'Milliseconds' }),
});

export const WebSocketStats = Type.Object({
  status: Type.String(),
  connections: Type.Integer(),
  subscriptions: Type.Integer(),
});

export const HealthResponse = named(
  'Health',
  Type.Object({
    status: Type.Union([Type.Literal('healthy'), Type.Literal('degraded'), Type.Literal('unhealthy')]),
    version: Type.String(),
    timestamp: Type.String({ format: 'date-time' }),
    uptime: Uptime,
    services: Type.Object({
      database: ServiceCheck,
      cache: ServiceCheck,
      websocket: WebSocketStats,
    }),
    _links: SelfLinks,
  }),
);

export const InfoResponse = named(
  'ServerInfo',
  Type.Object({
    version: Type.String(),
    server: Type.Object({ uptime: Uptime }),
    client: Type.Object({
      ip: Type.String(),
      userAgent: Type.Union([Type.String(), Type.Null()]),
      browser: Type.Union([Type.String(), Type.Null()], {
        description: 'Browser name and version, e.g. "Firefox 128.0"',
      }),
      os: Type.Union([Type.String(), Type.Null()], {
        description: 'Operating system name and version, e.g. "Windows 10"',
      }),
    }),
    timestamp: Type.String({ format: 'date-time' }),
    _links: SelfLinks,
  }),
);

const JOB_EXAMPLE = {
  name: 'purge-expired',
  description:
    'Deletes rows that can never be used again (expired sessions, spent tokens) and users past their deletion grace period',
  interval_seconds: 3600,
  next_run_at: '2026-11-26T21:00:00.000Z',
  running: false,
  last_started_at: '2026-11-26T20:00:00.012Z',
  last_finished_at: '2026-11-26T20:00:00.143Z',
  last_duration_ms: 131,
  last_outcome: 'succeeded',
  last_result: { sessions: 12, pending_registrations: 0 },
  last_error: null,
  runs: 240,
  failures: 0,
};

export const Job = named(
  'ScheduledJob',
  Type.Object(
    {
      name: Type.String(),
      description: Type.String(),
      interval_seconds: Type.Integer({
        description:
          'The period: the job runs once per period across all nodes; periods start at multiples of it since 1970 (UTC)',
      }),
      next_run_at: Type.Unsafe<Date | string>({
        type: 'string',
        format: 'date-time',
        description: 'When the next periodic run is due (a node looks every minute)',
      }),
      running: Type.Boolean({ description: 'A node is running it now' }),
      last_started_at: Nullable(DateTime),
      last_finished_at: Nullable(DateTime),
      last_duration_ms: Nullable(Type.Integer()),
      last_outcome: Nullable(Type.Union([Type.Literal('succeeded'), Type.Literal('failed')])),
      last_result: Type.Unknown({
        description: 'What the last successful run reported (counts); null after a failure',
      }),
      last_error: Nullable(Type.String({ description: 'The message of the last run when it failed' })),
      runs: Type.Integer({ description: 'Runs so far, on all nodes (periodic and by hand)' }),
      failures: Type.Integer(),
    },
    { examples: [JOB_EXAMPLE] },
  ),
);

export const JobParams = Type.Object({
  name: Type.String({
    minLength: 1,
    maxLength: 100,
    description: "The job's name, as GET /v1/system/jobs lists it",
    examples: ['purge-expired'],
  }),
});
