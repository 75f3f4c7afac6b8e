import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import { stdSerializers } from 'pino';

type LoggerOptions = Exclude<FastifyServerOptions['logger'], boolean | undefined>;

const INCOMING_REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/**
 * pino options: JSON lines; anything that could carry a credential is redacted
 * should it ever be logged by mistake. Request lines never include headers,
 * bodies or query strings (tokens travel in all three).
 */
export function loggerOptions(level: string, stream?: NodeJS.WritableStream): LoggerOptions {
  return {
    level,
    ...(stream ? { stream } : {}),
    serializers: { err: serializeError },
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers.cookie',
        'req.headers["x-internal-token"]',
        'req.headers["x-id-app-key"]',
        'req.headers["x-id-app-assertion"]',
        '*.password',
        '*.token',
        '*.secret',
      ],
      censor: '[redacted]',
    },
  };
}

/**
 * Database drivers attach the failing query and its parameters to their errors; the parameters
 * can be token hashes, password hashes or emails, so neither reaches the log.
 */
function serializeError(err: Error): ReturnType<typeof stdSerializers.err> {
  const serialized = stdSerializers.err(err) as ReturnType<typeof stdSerializers.err> & Record<string, unknown>;
  delete serialized.params;
  delete serialized.query;
  delete serialized.queryOptions;
  delete serialized.parameters;
  return serialized;
}

/** Honours a sane incoming X-Request-Id so a proxy's id follows the request; otherwise a fresh UUID. */
export function requestIdFor(header: string | string[] | undefined): string {
  return typeof header === 'string' && INCOMING_REQUEST_ID.test(header) ? header : randomUUID();
}

/** One log line per request: method, path, status, latency and request id. */
export function registerRequestLogging(app: FastifyInstance): void {
  app.addHook('onRequest', async (request, response) => {
    response.header('x-request-id', request.id);
  });
  app.addHook('onResponse', async (request, response) => {
    request.log.info(
      {
        method: request.method,
        // The route pattern, not the path: paths may carry tokens or email addresses.
        route: request.routeOptions.url ?? '(no route)',
        status: response.statusCode,
        latency_ms: Math.round(response.elapsedTime * 100) / 100,
      },
      'request completed',
    );
  });
}
