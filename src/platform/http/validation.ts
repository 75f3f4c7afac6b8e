import { Ajv, type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance, FastifyRequest, FastifySchemaCompiler, RouteOptions } from 'fastify';
import { withErrorResponses } from './envelopes.js';
import { RequestErrors } from './errors.js';

// ajv-formats is CommonJS; under NodeNext its default export is the module object.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

const LOCATION: Record<string, string> = {
  body: 'body field',
  querystring: 'query parameter',
  params: 'path parameter',
  headers: 'header',
};

function createAjv(coerceTypes: boolean | 'array'): Ajv {
  const ajv = new Ajv({ coerceTypes, useDefaults: true, removeAdditional: true, allErrors: false, strict: false });
  addFormats(ajv);
  ajv.addKeyword({
    keyword: 'x-lowercase',
    type: 'string',
    schemaType: 'boolean',
    modifying: true,
    errors: false,
    // A UUID (schemas.ts `uuid`) is always inside a body, query or path object, so it has a parent.
    validate: (
      lowercase: boolean,
      data: string,
      _schema: unknown,
      where?: { parentData: Record<string | number, unknown>; parentDataProperty: string | number },
    ) => {
      if (lowercase && where) where.parentData[where.parentDataProperty] = data.toLowerCase();
      return true;
    },
  });
  return ajv;
}

/**
 * JSON bodies are validated as sent (a string is not silently turned into a
 * number); query strings and path parameters are text on the wire, so they are
 * coerced to the declared types.
 */
export function registerValidation(app: FastifyInstance): void {
  const strict = createAjv(false);
  const coercing = createAjv('array');
  const compile: FastifySchemaCompiler<object> = ({ schema, httpPart }) =>
    storable(() => (httpPart === 'body' ? strict : coercing).compile(schema));
  app.setValidatorCompiler(compile);
  app.setSchemaErrorFormatter((errors, dataVar) => new Error(validationMessage(errors, dataVar)));
  app.addHook('onRoute', documentValidationError);
  app.addHook('preParsing', async (request) => refuseUnreadableBody(request.headers));
}

/**
 * Bodies are read as UTF-8 JSON as sent: a compressed or otherwise encoded body, or another charset,
 * would be misread as garbage, so they are refused with 415 saying what to send instead.
 */
function refuseUnreadableBody(headers: FastifyRequest['headers']): void {
  const encoding = headers['content-encoding']?.trim().toLowerCase();
  if (encoding && encoding !== 'identity') {
    throw RequestErrors.unsupported_media_type(
      `Content-Encoding ${encoding.slice(0, 40)} is not supported; send the body uncompressed`,
    );
  }
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(headers['content-type'] ?? '')?.[1]?.toLowerCase();
  if (charset && charset !== 'utf-8' && charset !== 'utf8') {
    throw RequestErrors.unsupported_media_type(`charset ${charset.slice(0, 40)} is not supported; send UTF-8`);
  }
}

type Validate = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };

/**
 * Every validated input, on every route, is also checked for what PostgreSQL cannot store or JSON
 * cannot carry back: a NUL character in any string (also in path and query parameters, where `%00`
 * decodes to one) and a number that is not finite (`1e400` parses as Infinity). Refused here with the
 * field's name, before a handler or the database sees it.
 *
 * The schema is compiled on the route's first request, not at start: compiling every route's schemas
 * took about 200 ms of every start, for routes most processes never serve.
 */
function storable(build: () => Validate): Validate {
  let validate: Validate | undefined;
  const checked: Validate = (data) => {
    const problem = unstorable(data);
    if (problem) {
      checked.errors = [
        { instancePath: problem.path, schemaPath: '#', keyword: problem.keyword, params: {}, message: problem.message },
      ];
      return false;
    }
    validate ??= build();
    const valid = validate(data);
    checked.errors = validate.errors;
    return valid;
  };
  return checked;
}

/**
 * Deepest nesting a request may send. Deeper values (free JSON: geofence metadata, setting values) are
 * refused: nothing below would be checked for NUL, and storing them overflows JSON.stringify's stack (a 500).
 */
const MAX_DEPTH = 64;

interface Unstorable {
  /** Where, as a JSON pointer from the value checked ('' for the value itself). */
  path: string;
  keyword: string;
  message: string;
}

/**
 * The first value PostgreSQL could not store in `value`, or undefined. Walks every value of every request
 * (a batch of 10,000 points is 110,000 of them): no array or path text is made along the way, only for a
 * value refused, on the way back up.
 */
function unstorable(value: unknown, depth = 0): Unstorable | undefined {
  if (typeof value === 'string')
    return value.includes('\u0000')
      ? { path: '', keyword: 'nul', message: 'must not contain NUL characters' }
      : undefined;
  if (typeof value === 'number')
    return Number.isFinite(value) ? undefined : { path: '', keyword: 'finite', message: 'must be a finite number' };
  if (value === null || typeof value !== 'object') return undefined;
  if (depth > MAX_DEPTH)
    return { path: '', keyword: 'depth', message: `must not nest deeper than ${MAX_DEPTH} levels` };
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = unstorable(value[i], depth + 1);
      if (found) return { ...found, path: `/${i}${found.path}` };
    }
    return undefined;
  }
  for (const key of Object.keys(value)) {
    if (key.includes('\u0000')) return { path: '', keyword: 'nul', message: 'must not have a key with NUL characters' };
    const found = unstorable((value as Record<string, unknown>)[key], depth + 1);
    if (found) return { ...found, path: `/${key}${found.path}` };
  }
  return undefined;
}

/** A route that validates its input answers 400 `request.validation`; its OpenAPI responses say so. */
function documentValidationError(route: RouteOptions): void {
  const schema = route.schema as Record<string, unknown> | undefined;
  if (!schema || !(schema.body || schema.querystring || schema.params)) return;
  schema.response = withErrorResponses((schema.response ?? {}) as Record<string, unknown>, [RequestErrors.validation]);
}

/** The 400 message for failed validation: one sentence naming the field, capitalised. */
function validationMessage(errors: ErrorObject[], dataVar: string): string {
  const message = missingAllOf(errors) ?? notOneOf(errors, dataVar) ?? describeValidationError(errors[0], dataVar);
  return message.charAt(0).toUpperCase() + message.slice(1);
}

let plainValidator: Ajv | undefined;

/**
 * A check of data against a schema outside a route's own (a value whose shape depends on another
 * field), with the rules of request bodies (nothing coerced): the 400 message, or undefined when valid.
 */
export function compileBodyCheck(schema: object): (data: unknown) => string | undefined {
  // Compiled on first use, like the routes' validators: modules declare their checks at load.
  let validate: ReturnType<Ajv['compile']> | undefined;
  return (data) => {
    validate ??= (plainValidator ??= createAjv(false)).compile(schema);
    return validate(data) ? undefined : validationMessage(validate.errors ?? [], 'body');
  };
}

/**
 * As `compileBodyCheck`, for one item of a list checked item by item (a batch of points): the dotted path of
 * the offending field (empty for the item itself) beside the message, which names it as `body field 'x'`.
 */
export function compileItemCheck(schema: object): (data: unknown) => { field: string; message: string } | undefined {
  let validate: ReturnType<Ajv['compile']> | undefined;
  return (data) => {
    validate ??= (plainValidator ??= createAjv(false)).compile(schema);
    if (validate(data)) return undefined;
    const errors = validate.errors ?? [];
    const first = errors[0];
    const missing =
      first?.keyword === 'required' ? (first.params as { missingProperty: string }).missingProperty : undefined;
    const field = [first ? dottedPath(first.instancePath) : '', missing].filter(Boolean).join('.');
    return { field, message: validationMessage(errors, 'body') };
  };
}

/** A field that must be one of some values (an enum, or a union of literals) and is none: the message lists them. */
function notOneOf(errors: ErrorObject[], dataVar: string): string | undefined {
  const last = errors[errors.length - 1];
  const path = last && dottedPath(last.instancePath);
  const allowed = last && path ? allowedValues(last, errors.slice(0, -1)) : undefined;
  if (!allowed?.length) return undefined;
  const values = allowed.map((value) => (typeof value === 'string' ? value : JSON.stringify(value)));
  return `${LOCATION[dataVar] ?? dataVar} '${path}' must be one of: ${values.join(', ')}`;
}

/** The values an `enum` error allows, or those of the `const` branches of a failed `anyOf`. */
function allowedValues(last: ErrorObject, branches: ErrorObject[]): unknown[] | undefined {
  if (last.keyword === 'enum') return (last.params as { allowedValues: unknown[] }).allowedValues;
  if (last.keyword !== 'anyOf' || !branches.every((e) => e.keyword === 'const' && e.instancePath === last.instancePath))
    return undefined;
  return branches.map((e) => (e.params as { allowedValue: unknown }).allowedValue);
}

/** `/value/latitude` → `value.latitude`. */
const dottedPath = (instancePath: string) => instancePath.split('/').filter(Boolean).join('.');

/** For a body that needs at least one of its fields (`Body(..., { atLeastOne: true })`) and has none. */
function missingAllOf(errors: ErrorObject[]): string | undefined {
  const last = errors[errors.length - 1];
  if (last?.keyword !== 'anyOf' || last.instancePath !== '') return undefined;
  const names = errors.filter((e) => e.keyword === 'required' && /^#\/anyOf\/\d+\/required$/.test(e.schemaPath));
  if (names.length === 0) return undefined;
  return `Give at least one of: ${names.map((e) => (e.params as { missingProperty: string }).missingProperty).join(', ')}`;
}

/** One sentence that names the offending field, e.g. `query parameter 'limit' must be <= 100`. */
export function describeValidationError(error: ErrorObject | undefined, dataVar: string): string {
  const where = LOCATION[dataVar] ?? dataVar;
  if (!error) return `Invalid ${where}`;
  const path = dottedPath(error.instancePath);
  const params = error.params as Record<string, unknown>;
  if (error.keyword === 'required') {
    const field = [path, params.missingProperty].filter(Boolean).join('.');
    return `${where} '${field}' is required`;
  }
  if (error.keyword === 'additionalProperties') {
    const field = [path, params.additionalProperty].filter(Boolean).join('.');
    return `${where} '${field}' is not allowed`;
  }
  if (!path) return dataVar === 'body' ? `Request body ${error.message}` : `Invalid ${where}s: ${error.message}`;
  return `${where} '${path}' ${error.message}`;
}
