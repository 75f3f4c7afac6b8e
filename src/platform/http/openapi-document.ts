import { errorDefinitionOf, errorNameFor, RequestErrors } from './errors.js';
import { operationIdFor } from './operation-ids.js';

interface Response {
  description?: string;
  'x-error-codes'?: string[];
  content?: Record<string, { schema?: unknown; example?: unknown }>;
}

interface Parameter {
  in: string;
  required?: boolean;
  schema?: { default?: unknown };
}

interface Operation {
  operationId?: string;
  security?: unknown[];
  parameters?: Parameter[];
  responses?: Record<string, Response>;
}

export interface OpenApiDocument {
  servers?: { url: string; description?: string }[];
  paths?: Record<string, Record<string, Operation>>;
}

const SUCCESS: Record<string, string> = {
  '101': 'Switching protocols',
  '200': 'OK',
  '201': 'Created',
  '202': 'Accepted',
  '204': 'No content',
  '2XX': 'OK',
  '301': 'Moved permanently (see Location)',
  '302': 'Found: continue at Location',
  '303': 'See other: continue at Location',
  '307': 'Temporary redirect (see Location)',
};

const ERROR_BODY = { $ref: '#/components/schemas/ErrorBody' };

/**
 * What @fastify/swagger cannot say from the route schemas alone, added to the generated document:
 * an `operationId` for every operation, `security: []` on those that declared no guard (the guard
 * states the requirement of the others), where the API lives, a description for every response
 * (with the error codes `errorResponses` listed), the 429 any request can meet, and query
 * parameters with a default as optional.
 */
export function finishDocument(document: OpenApiDocument, publicUrl: string | undefined): OpenApiDocument {
  document.servers = [
    publicUrl ? { url: publicUrl } : { url: '/', description: 'The server this document was read from' },
  ];
  for (const [path, operations] of Object.entries(document.paths ?? {})) {
    for (const [method, operation] of Object.entries(operations)) {
      operation.operationId ??= operationIdFor(method, path);
      operation.security ??= [];
      for (const parameter of operation.parameters ?? []) {
        if (parameter.in === 'query' && parameter.schema?.default !== undefined) delete parameter.required;
      }
      const responses = (operation.responses ??= {});
      // Any request can meet its identity's limit, or the limit on unknown credentials from its address.
      addErrorCode(responses, '429', RequestErrors.rate_limited.code);
      for (const [status, response] of Object.entries(responses)) {
        describe(status, response);
        unwrapNamed(response);
      }
    }
  }
  return document;
}

/** `allOf: [{ $ref }]` alone (see docs.ts, a named resource answered whole) is the `$ref` itself. */
function unwrapNamed(response: Response): void {
  for (const media of Object.values(response.content ?? {})) {
    const schema = media.schema as { allOf?: unknown[] } | undefined;
    if (schema && Object.keys(schema).length === 1 && schema.allOf?.length === 1) media.schema = schema.allOf[0];
  }
}

function addErrorCode(responses: Record<string, Response>, status: string, code: string): void {
  const present = responses[status];
  if (present && !present['x-error-codes']) return;
  const codes = present?.['x-error-codes'] ?? [];
  if (!codes.includes(code)) codes.push(code);
  responses[status] = {
    ...present,
    'x-error-codes': codes,
    content: present?.content ?? { 'application/json': { schema: ERROR_BODY } },
  };
}

/**
 * @fastify/swagger keeps only the description of a response, so the codes `errorResponses` lists there
 * (`Codes: a, b`) are read back into `x-error-codes`, for client generators and tests, and the body of
 * the first one becomes the response's example. Responses left as "Default Response" say their status.
 */
function describe(status: string, response: Response): void {
  const listed = /^Codes: (.+)$/.exec(response.description ?? '');
  if (listed) response['x-error-codes'] = listed[1]!.split(', ');
  const codes = response['x-error-codes'];
  if (codes) {
    response.description = `${errorPhrase(status)}: ${codes.map((code) => `\`${code}\``).join(', ')}`;
    const first = errorDefinitionOf(codes[0]!);
    const json = response.content?.['application/json'];
    if (first && json)
      json.example ??= { error: errorNameFor(Number(status)), message: first.message, code: first.code };
  } else if (!response.description || response.description === 'Default Response') {
    response.description = SUCCESS[status] ?? errorPhrase(status);
  }
}

/** `NotFound` → `Not found`. */
function errorPhrase(status: string): string {
  const words = errorNameFor(Number(status)).replace(/(?<=[a-z])(?=[A-Z])/g, ' ');
  return words[0] + words.slice(1).toLowerCase();
}
