import type { FastifyError, FastifyInstance } from 'fastify';

const ERROR_NAMES: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  406: 'NotAcceptable',
  409: 'Conflict',
  413: 'PayloadTooLarge',
  415: 'UnsupportedMediaType',
  429: 'TooManyRequests',
  500: 'InternalServerError',
  501: 'NotImplemented',
  503: 'ServiceUnavailable',
};

export function errorNameFor(status: number): string {
  return ERROR_NAMES[status] ?? (status >= 500 ? 'InternalServerError' : 'BadRequest');
}

/** The one error type of the service: an HTTP status, a stable `error` name and a message for people. */
export class AppError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly error: string = errorNameFor(status),
    /** Response headers that belong to the error (e.g. Retry-After). */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'AppError';
  }
}

export const badRequest = (message: string) => new AppError(400, message);
export const unauthorized = (message = 'Invalid or missing authentication token') => new AppError(401, message);
export const forbidden = (message = 'Insufficient permissions for this operation') => new AppError(403, message);
export const notFound = (message = 'Resource not found') => new AppError(404, message);
export const conflict = (message: string) => new AppError(409, message);
export const tooManyRequests = (message: string, retryAfterSecs: number) =>
  new AppError(429, message, errorNameFor(429), { 'retry-after': String(Math.max(1, Math.ceil(retryAfterSecs))) });

interface ErrorBody {
  error: string;
  message: string;
}

// PostgreSQL error classes that mean "bad input" rather than a fault of ours.
const DATABASE_ERRORS: Record<string, [number, string]> = {
  '23505': [409, 'A resource with the same unique value already exists'],
  '23514': [400, 'A value is outside its allowed range'],
  '22P02': [400, 'A value has an invalid format'],
  '22003': [400, 'A number is out of range'],
  '22007': [400, 'A date or time has an invalid format'],
  '22008': [400, 'A date or time is out of range'],
};

/**
 * Turns anything thrown by a route (our AppError, schema validation, Fastify's
 * body parsing errors, database constraint violations, unknown faults) into
 * `{ error, message }`. Unknown faults become a 500 that leaks no internals.
 */
export function toErrorResponse(err: unknown): { status: number; body: ErrorBody; unexpected: boolean } {
  if (err instanceof AppError) return reply(err.status, err.message, err.error);
  const fastifyError = err as Partial<FastifyError> & { code?: string };
  if (fastifyError.validation) return reply(400, fastifyError.message ?? 'Invalid request');
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return reply(400, `Malformed JSON body: ${fastifyError.message}`);
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return reply(413, 'Request body is too large');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return reply(415, 'Unsupported Content-Type; send application/json');
  }
  if (err instanceof SyntaxError && fastifyError.statusCode === 400) return reply(400, `Malformed JSON body: ${err.message}`);
  if (fastifyError.code === '23503') return reply(...foreignKeyViolation(err as { detail?: string }));
  const database = fastifyError.code ? DATABASE_ERRORS[fastifyError.code] : undefined;
  if (database) return reply(database[0], database[1]);
  const status = fastifyError.statusCode;
  if (status && status >= 400 && status < 500) return reply(status, fastifyError.message ?? errorNameFor(status));
  return { ...reply(500, 'An unexpected error occurred'), unexpected: true };
}

/**
 * A foreign key violation on a write names the column whose id points nowhere (400);
 * on a delete, the row is still referenced (409).
 */
function foreignKeyViolation(err: { detail?: string }): [number, string] {
  const missing = /^Key \((\w+)\)=\(.*\) is not present in table "(\w+)"/.exec(err.detail ?? '');
  if (!missing) return [409, 'The resource is still referenced by other resources'];
  const [, column, table] = missing as unknown as [string, string, string];
  const thing = table.replace(/ies$/, 'y').replace(/s$/, '').replaceAll('_', ' ');
  return [400, `${column} does not name an existing ${thing}`];
}

function reply(status: number, message: string, error = errorNameFor(status)) {
  return { status, body: { error, message }, unexpected: false };
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err, request, response) => {
    const { status, body, unexpected } = toErrorResponse(err);
    if (unexpected) request.log.error({ err }, 'unexpected error');
    if (err instanceof AppError) response.headers(err.headers);
    return response.status(status).send(body);
  });
  app.setNotFoundHandler((request, response) =>
    response.status(404).send({ error: 'NotFound', message: `No route for ${request.method} ${request.url.split('?')[0]}` }),
  );
}
