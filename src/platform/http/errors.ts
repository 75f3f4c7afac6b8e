import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { classifyDatabaseError, type DatabaseError } from '../db/errors.js';
import { KeyValueUnavailableError } from '../kv/kv.js';

const ERROR_NAMES: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  406: 'NotAcceptable',
  408: 'RequestTimeout',
  409: 'Conflict',
  413: 'PayloadTooLarge',
  414: 'URITooLong',
  415: 'UnsupportedMediaType',
  429: 'TooManyRequests',
  500: 'InternalServerError',
  501: 'NotImplemented',
  502: 'BadGateway',
  503: 'ServiceUnavailable',
};

export function errorNameFor(status: number): string {
  return ERROR_NAMES[status] ?? (status >= 500 ? 'InternalServerError' : 'BadRequest');
}

/**
 * The one error type of the service: an HTTP status, a stable machine `code` (`<area>.<reason>`, e.g.
 * `trip.invalid_transition`) and a message for people. The body is `{ error, message, code }`, where
 * `error` is the status's name as the interface fixes it.
 */
export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** Response headers that belong to the error (e.g. Retry-After). */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'AppError';
  }

  get error(): string {
    return errorNameFor(this.status);
  }
}

/** One declared error: call it for an AppError (with its default message, or another one). */
export interface ErrorDefinition {
  (message?: string, headers?: Record<string, string>): AppError;
  readonly status: number;
  readonly code: string;
  readonly message: string;
}

type ErrorSpec = readonly [status: number, message: string, options?: { constraint?: string }];

/** Every declared error by its code, so two areas cannot claim the same one. */
const declaredCodes = new Map<string, ErrorDefinition>();

/** The declared error with this code (the OpenAPI document shows its body as the example). */
export const errorDefinitionOf = (code: string): ErrorDefinition | undefined => declaredCodes.get(code);
/** Constraint or index name → the error a violation of it means (declared beside the errors). */
const constraintErrors = new Map<string, ErrorDefinition>();

/**
 * Declares the errors of an area once: `defineErrors('trip', { not_found: [404, 'Trip not found'] })`
 * gives `TripErrors.not_found()` with the code `trip.not_found`. An error declared with a `constraint`
 * is what the error handler answers when that database constraint or unique index is violated, so a
 * race that slips past a service's check still gets the interface's message.
 */
export function defineErrors<const T extends Record<string, ErrorSpec>>(
  area: string,
  specs: T,
): { [K in keyof T]: ErrorDefinition } {
  const definitions = {} as Record<string, ErrorDefinition>;
  for (const [reason, [status, defaultMessage, options]] of Object.entries(specs)) {
    const code = `${area}.${reason}`;
    if (declaredCodes.has(code)) throw new Error(`error code ${code} is declared twice`);

    const definition = Object.assign(
      (message: string = defaultMessage, headers?: Record<string, string>) =>
        new AppError(status, code, message, headers),
      { status, code, message: defaultMessage },
    );
    declaredCodes.set(code, definition);
    if (options?.constraint) {
      if (constraintErrors.has(options.constraint)) throw new Error(`constraint ${options.constraint} has two errors`);
      constraintErrors.set(options.constraint, definition);
    }
    definitions[reason] = definition;
  }
  return definitions as { [K in keyof T]: ErrorDefinition };
}

/** Errors of the HTTP layer and the platform, answered by every route. */
export const RequestErrors = defineErrors('request', {
  validation: [400, 'Invalid request'],
  malformed_json: [400, 'Malformed JSON body'],
  body_too_large: [413, 'Request body is too large'],
  unsupported_media_type: [415, 'Unsupported Content-Type; send application/json'],
  bad_url: [400, 'The URL is not valid (a malformed percent-encoding)'],
  bad_host: [400, 'The Host header is not a valid host'],
  uri_too_long: [414, 'A path parameter is too long'],
  route_not_found: [404, 'No route for this method and path'],
  rate_limited: [429, 'Rate limit exceeded'],
  internal: [500, 'An unexpected error occurred'],
});

export const AuthErrors = defineErrors('auth', {
  unauthorized: [401, 'Invalid or missing authentication token'],
  forbidden: [403, 'Insufficient permissions for this operation'],
  system_key_not_permitted: [403, 'System key not permitted on this route'],
  system_key_required: [403, 'Only the system API key may call this endpoint'],
  user_required: [403, 'This credential does not belong to a user'],
  oauth_token_not_permitted: [403, 'OAuth access tokens may not use this route; it needs a session or an API key'],
});

export const KeyValueErrors = defineErrors('kv', {
  unavailable: [503, 'A shared service this request needs is unavailable; try again shortly'],
});

/** Database faults that reach the handler without a service turning them into an error of its own. */
export const DatabaseErrors = defineErrors('database', {
  unique_violation: [409, 'A resource with the same unique value already exists'],
  still_referenced: [409, 'The resource is still referenced by other resources'],
  missing_reference: [400, 'A referenced resource does not exist'],
  check_violation: [400, 'A value is outside its allowed range'],
  invalid_text: [400, 'Text must not contain NUL characters or invalid byte sequences'],
  invalid_value: [400, 'A value has an invalid format or is out of range'],
  unavailable: [503, 'The database is unavailable; try again shortly'],
});

/**
 * Codes any operation can answer, documented once in the API description rather than on each one:
 * faults of the request as a whole, of the database, or a system key used outside its allowlist.
 */
export const CODES_OF_ANY_ROUTE: readonly string[] = [
  RequestErrors.malformed_json.code,
  RequestErrors.body_too_large.code,
  RequestErrors.unsupported_media_type.code,
  RequestErrors.bad_url.code,
  RequestErrors.bad_host.code,
  RequestErrors.uri_too_long.code,
  RequestErrors.rate_limited.code,
  'request.invalid',
  AuthErrors.system_key_not_permitted.code,
  DatabaseErrors.invalid_text.code,
  DatabaseErrors.invalid_value.code,
  DatabaseErrors.unavailable.code,
  KeyValueErrors.unavailable.code,
];

/** Characters of a client's input an error message repeats at most. */
export const QUOTED_INPUT_CHARS = 64;

/**
 * Client input as an error message quotes it: at most a short prefix, so a request of kilobytes is not
 * answered (and logged by proxies) with its own kilobytes again.
 */
export const quoted = (input: string): string =>
  input.length <= QUOTED_INPUT_CHARS ? input : `${input.slice(0, QUOTED_INPUT_CHARS)}… (${input.length} characters)`;

export const tooManyRequests = (definition: ErrorDefinition, message: string, retryAfterSecs: number) =>
  definition(message, { 'retry-after': String(Math.max(1, Math.ceil(retryAfterSecs))) });

interface ErrorBody {
  error: string;
  message: string;
  code: string;
}

/** A database error as the API answers it: the declared error of its constraint, else one by fault. */
export function databaseAppError(fault: DatabaseError): AppError {
  const declared = fault.constraint ? constraintErrors.get(fault.constraint) : undefined;
  if (declared) return declared();
  switch (fault.fault) {
    case 'unique_violation':
      return DatabaseErrors.unique_violation();
    case 'foreign_key_violation':
      return foreignKeyViolation(fault.detail);
    case 'check_violation':
      return DatabaseErrors.check_violation();
    case 'invalid_text':
      return DatabaseErrors.invalid_text();
    case 'invalid_value':
      return DatabaseErrors.invalid_value();
    case 'unavailable':
      return DatabaseErrors.unavailable();
  }
}

/**
 * A foreign key violation on a write names the column whose id points nowhere (400);
 * on a delete, the row is still referenced (409).
 */
function foreignKeyViolation(detail = ''): AppError {
  const missing = /^Key \((\w+)\)=\(.*\) is not present in table "(\w+)"/.exec(detail);
  if (!missing) return DatabaseErrors.still_referenced();
  const [, column, table] = missing as unknown as [string, string, string];
  const thing = table.replace(/ies$/, 'y').replace(/s$/, '').replaceAll('_', ' ');
  return DatabaseErrors.missing_reference(`${column} does not name an existing ${thing}`);
}

/**
 * Turns anything thrown by a route (our AppError, schema validation, Fastify's
 * body parsing errors, database errors, unknown faults) into `{ error, message, code }`.
 * Unknown faults become a 500 that leaks no internals.
 */
export function toErrorResponse(err: unknown): { status: number; body: ErrorBody; unexpected: boolean } {
  if (err instanceof AppError) return bodyOf(err);
  const fastifyError = err as Partial<FastifyError> & { code?: string };
  if (fastifyError.validation) return bodyOf(RequestErrors.validation(fastifyError.message));
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return bodyOf(RequestErrors.malformed_json(`Malformed JSON body: ${fastifyError.message}`));
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return bodyOf(RequestErrors.body_too_large());
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return bodyOf(RequestErrors.unsupported_media_type());
  }
  if (err instanceof SyntaxError && fastifyError.statusCode === 400) {
    return bodyOf(RequestErrors.malformed_json(`Malformed JSON body: ${err.message}`));
  }
  if (err instanceof KeyValueUnavailableError) return { ...bodyOf(KeyValueErrors.unavailable()), unexpected: true };
  const database = classifyDatabaseError(err);
  if (database) return { ...bodyOf(databaseAppError(database)), unexpected: database.fault === 'unavailable' };
  const status = fastifyError.statusCode;
  if (status && status >= 400 && status < 500) {
    return bodyOf(new AppError(status, 'request.invalid', fastifyError.message ?? errorNameFor(status)));
  }
  return { ...bodyOf(RequestErrors.internal()), unexpected: true };
}

function bodyOf(err: AppError) {
  return { status: err.status, body: { error: err.error, message: err.message, code: err.code }, unexpected: false };
}

/**
 * Errors of Fastify's router, before any route or error handler: the same body as every other error,
 * and never an echo of the offending URL (it can be kilobytes long).
 */
export function frameworkErrorResponse(err: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const error =
    err.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? RequestErrors.uri_too_long()
      : err.code === 'FST_ERR_BAD_URL'
        ? RequestErrors.bad_url()
        : RequestErrors.internal();
  void reply.code(error.status).send({ error: error.error, message: error.message, code: error.code });
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err, request, response) => {
    const { status, body, unexpected } = toErrorResponse(err);
    if (unexpected) request.log.error({ err }, status === 503 ? 'database unavailable' : 'unexpected error');
    if (err instanceof AppError) response.headers(err.headers);
    return response.status(status).send(body);
  });
  app.setNotFoundHandler((request, response) =>
    response.status(404).send({
      error: 'NotFound',
      message: `No route for ${request.method} ${quoted(request.url.split('?')[0]!)}`,
      code: RequestErrors.route_not_found.code,
    }),
  );
}
