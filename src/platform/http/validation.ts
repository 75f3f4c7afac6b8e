import { Ajv, type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance, FastifySchemaCompiler } from 'fastify';

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
    (httpPart === 'body' ? strict : coercing).compile(schema);
  app.setValidatorCompiler(compile);
  app.setSchemaErrorFormatter((errors, dataVar) => new Error(validationMessage(errors, dataVar)));
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
  const validate = (plainValidator ??= createAjv(false)).compile(schema);
  return (data) => (validate(data) ? undefined : validationMessage(validate.errors ?? [], 'body'));
}

/** A union of constants (`Type.Union([Type.Literal(...)])`) that matched none: the message lists them. */
function notOneOf(errors: ErrorObject[], dataVar: string): string | undefined {
  const last = errors[errors.length - 1];
  if (last?.keyword !== 'anyOf' && last?.keyword !== 'enum') return undefined;
  const allowed =
    last.keyword === 'enum'
      ? (last.params as { allowedValues: unknown[] }).allowedValues
      : errors.slice(0, -1).every((e) => e.keyword === 'const' && e.instancePath === last.instancePath)
        ? errors.slice(0, -1).map((e) => (e.params as { allowedValue: unknown }).allowedValue)
        : undefined;
  if (!allowed || allowed.length === 0) return undefined;
  const path = last.instancePath.split('/').filter(Boolean).join('.');
  const where = LOCATION[dataVar] ?? dataVar;
  const subject = path ? `${where} '${path}'` : dataVar === 'body' ? 'Request body' : `${where}s`;
  return `${subject} must be one of: ${allowed.map((value) => (typeof value === 'string' ? value : JSON.stringify(value))).join(', ')}`;
}

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
  const path = error.instancePath.split('/').filter(Boolean).join('.');
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
