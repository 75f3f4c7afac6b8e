import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../../config.js';
import { VERSION } from '../../version.js';
import { ErrorBody } from './envelopes.js';
import { CODES_OF_ANY_ROUTE, errorDefinitionOf, errorNameFor } from './errors.js';

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
          bearer: { type: 'http', scheme: 'bearer', description: 'API key, session token (ses_…) or OAuth access token' },
          appKey: { type: 'apiKey', in: 'header', name: 'X-ID-App-Key', description: 'The secret of an internal app (id, backend, policies)' },
        },
      },
    },
    transformObject: (document) => withErrorCodeExtensions((document as { openapiObject: OpenApiDocument }).openapiObject) as object,
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });
  if (config.openapiEnabled) {
    app.get('/v1/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  }
  if (config.swaggerUiEnabled) {
    await app.register(swaggerUi, { routePrefix: '/v1/swagger-ui', uiConfig: { docExpansion: 'list' } });
  }
}

interface DocumentedResponse {
  description?: string;
  'x-error-codes'?: string[];
  content?: Record<string, { example?: unknown }>;
}

interface OpenApiDocument {
  paths?: Record<string, Record<string, { responses?: Record<string, DocumentedResponse> }>>;
}

/**
 * @fastify/swagger keeps only the description of a response, so the codes `errorResponses` lists there
 * (`Codes: a, b`) are added back as `x-error-codes`, for client generators and tests to read, and the
 * body of the first one becomes the response's example.
 */
function withErrorCodeExtensions(document: OpenApiDocument): OpenApiDocument {
  for (const operations of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(operations)) {
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        const listed = /^Codes: (.+)$/.exec(response.description ?? '');
        if (!listed) continue;
        const codes = listed[1]!.split(', ');
        response['x-error-codes'] = codes;
        const first = errorDefinitionOf(codes[0]!);
        const json = response.content?.['application/json'];
        if (first && json) json.example = { error: errorNameFor(Number(status)), message: first.message, code: first.code };
      }
    }
  }
  return document;
}
