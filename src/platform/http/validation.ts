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
  app.setSchemaErrorFormatter((errors, dataVar) => {
    const message = missingAllOf(errors) ?? describeValidationError(errors[0], dataVar);
    return new Error(message.charAt(0).toUpperCase() + message.slice(1));
  });
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
