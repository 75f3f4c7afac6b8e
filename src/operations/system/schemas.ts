import { Type } from 'typebox';
import { SelfLinks } from '../../platform/http/envelopes.js';
import { named } from '../../platform/http/schemas.js';

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

export const WebSocketStats = Type.Object({ status: Type.String(), connections: Type.Integer(), subscriptions: Type.Integer() });

export const HealthResponse = named('Health', Type.Object({
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
}));

export const InfoResponse = named('ServerInfo', Type.Object({
  version: Type.String(),
  server: Type.Object({ uptime: Uptime }),
  client: Type.Object({
    ip: Type.String(),
    userAgent: Type.Union([Type.String(), Type.Null()]),
    browser: Type.Union([Type.String(), Type.Null()], { description: 'Browser name and version, e.g. "Firefox 128.0"' }),
    os: Type.Union([Type.String(), Type.Null()], { description: 'Operating system name and version, e.g. "Windows 10"' }),
  }),
  timestamp: Type.String({ format: 'date-time' }),
  _links: SelfLinks,
}));
