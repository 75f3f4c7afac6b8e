import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../../config.js';
import { VERSION } from '../../version.js';
import { ErrorBody } from './envelopes.js';
import { CODES_OF_ANY_ROUTE } from './errors.js';
import { finishDocument, type OpenApiDocument } from './openapi-document.js';

/**
 * OpenAPI 3.1 generated from the route schemas. Must be registered before the
 * routes so it sees every one of them. Each surface answers 404 when its flag
 * is false (the routes are then never registered).
 */
export async function registerDocs(app: FastifyInstance, config: Config): Promise<void> {
  app.addSchema(ErrorBody);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Waygate API',
        version: VERSION,
        description:
          'GPS tracking together with identity and access. Errors are `{ error, message, code }`: `error` names ' +
          'the HTTP status, `code` is a stable `<area>.<reason>`. Each operation lists the codes it answers; any ' +
          `operation can also answer ${CODES_OF_ANY_ROUTE.map((code) => `\`${code}\``).join(', ')}.`,
      },
      components: {
        securitySchemes: {
          bearer: {
            type: 'http',
            scheme: 'bearer',
            description: 'API key, session token (ses_…) or OAuth access token',
          },
          appKey: {
            type: 'apiKey',
            in: 'header',
            name: 'X-ID-App-Key',
            description: 'The secret of an internal app (id, backend, policies)',
          },
        },
      },
    },
    transform: ({ schema, url }) => ({
      schema: withNamedResponsesNested(schema as RouteSchema | undefined) as never,
      url,
    }),
    transformObject: (document) =>
      finishDocument((document as { openapiObject: OpenApiDocument }).openapiObject, config.publicUrl) as object,
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });
  if (config.openapiEnabled) {
    app.get('/v1/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  }
  if (config.swaggerUiEnabled) {
    await app.register(swaggerUi, { routePrefix: '/v1/swagger-ui', uiConfig: { docExpansion: 'list' } });
  }
}

type RouteSchema = Record<string, unknown> & { response?: Record<string, { $id?: string; description?: string }> };

/**
 * @fastify/swagger names a schema with an `$id` only where it is nested; a named resource answered
 * as the whole body (the sign-in, the health report) is nested in an `allOf` here, for the document
 * only, and `finishDocument` turns that back into a plain `$ref`.
 */
function withNamedResponsesNested(schema: RouteSchema | undefined): RouteSchema | undefined {
  if (!schema?.response) return schema;
  const response = Object.fromEntries(
    Object.entries(schema.response).map(([status, body]) => [
      status,
      body.$id ? { ...(body.description ? { description: body.description } : {}), allOf: [body] } : body,
    ]),
  );
  return { ...schema, response };
}
