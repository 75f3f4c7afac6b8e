import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { requestUrl } from '../../platform/http/envelopes.js';
import { parseUserAgent } from '../../platform/http/user-agent.js';
import { VERSION } from '../../version.js';
import { HealthResponse, InfoResponse } from './schemas.js';
import { createHealthService, uptimeOf } from './service.js';

export async function systemRoutes(app: FastifyInstance): Promise<void> {
  const health = createHealthService({
    database: app.database,
    kv: app.kv,
    websocket: () => app.websocketStats(),
    nowMs: () => app.services.clock.nowMs(),
  });

  const healthRoute = {
    schema: {
      tags: ['Health'],
      summary: 'Service health',
      description: 'Answers 503 when the database does not answer.',
      response: { 200: HealthResponse, 503: HealthResponse },
    },
  };
  const healthHandler = async (request: FastifyRequest, response: FastifyReply) => {
    const { status, services } = await health.report();
    return response.status(status === 'unhealthy' ? 503 : 200).send({
      status,
      version: VERSION,
      timestamp: app.services.clock.now().toISOString(),
      uptime: uptimeOf(process.uptime()),
      services,
      _links: { self: requestUrl(request) },
    });
  };
  app.get('/health', healthRoute, healthHandler);
  app.get('/v1/health', healthRoute, healthHandler);

  app.get(
    '/v1',
    { schema: { tags: ['Health'], summary: 'Service and client information', response: { 200: InfoResponse } } },
    async (request) => {
      const userAgent = request.headers['user-agent'] || null;
      const parsed = userAgent ? parseUserAgent(userAgent) : { browser: null, os: null };
      return {
        version: VERSION,
        server: { uptime: uptimeOf(process.uptime()) },
        client: {
          ip: request.ip,
          userAgent,
          browser: parsed.browser,
          os: parsed.os,
        },
        timestamp: app.services.clock.now().toISOString(),
        _links: { self: requestUrl(request) },
      };
    },
  );
}
