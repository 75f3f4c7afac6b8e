import type { FastifyInstance } from 'fastify';
import { CODES_OF_ANY_ROUTE } from '../src/platform/http/errors.js';

/** `METHOD /route status code` of every error answered in this test file that its route does not document. */
export const undocumentedErrors = new Set<string>();

/**
 * Checks each error response (4xx) against the route's OpenAPI responses: a code the route answers must be
 * listed under its status (`x-error-codes`), so the document clients generate from tells the truth.
 */
export function watchErrorResponses(app: FastifyInstance): void {
  app.addHook('onSend', (request, reply, payload, done) => {
    const status = reply.statusCode;
    const route = request.routeOptions;
    // (A route that documents no responses at all, such as a test's probe route, is not checked.)
    if (status < 400 || status >= 500 || typeof payload !== 'string' || !route.schema?.response)
      return done(null, payload);
    const code = errorCodeOf(payload);
    if (code && !CODES_OF_ANY_ROUTE.includes(code)) {
      const responses = route.schema.response as Record<string, { 'x-error-codes'?: string[] } | undefined>;
      if (!responses[status]?.['x-error-codes']?.includes(code))
        undocumentedErrors.add(`${request.method} ${route.url} ${status} ${code}`);
    }
    done(null, payload);
  });
}

function errorCodeOf(payload: string): string | undefined {
  try {
    return (JSON.parse(payload) as { code?: unknown }).code as string | undefined;
  } catch {
    return undefined;
  }
}
