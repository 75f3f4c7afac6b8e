import { Type, type Static, type TSchema } from 'typebox';

/**
 * A UUID. A request may spell one in either case; PostgreSQL writes them in lower case, and ids are
 * compared, cached and named in cursors as text, so validation lower-cases every UUID a request sends
 * (`x-lowercase`, see validation.ts). Handlers see ids as the database writes them.
 */
export const uuid = (options: { description?: string } = {}) =>
  Type.String({ format: 'uuid', 'x-lowercase': true, ...options });
export const Uuid = uuid();

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Whether text is a UUID (any case), for values that may be one or something else. */
export const isUuid = (text: string) => UUID_PATTERN.test(text);
/** A timestamp: handlers return Date objects, the serialiser writes ISO 8601. */
export const DateTime = Type.Unsafe<Date | string>({ type: 'string', format: 'date-time' });

const SCALAR_TYPES = new Set(['string', 'number', 'integer', 'boolean']);

/**
 * The schema or null. A plain scalar becomes `type: [scalar, 'null']` rather than `anyOf`: the
 * response serialiser runs a full validator per `anyOf` branch on every value, a type list costs it
 * one `typeof`. Enumerations and composite schemas keep `anyOf` (an `enum` would have to list null).
 */
export function Nullable<T extends TSchema>(schema: T) {
  const { type } = schema as { type?: unknown };
  const plainScalar = typeof type === 'string' && SCALAR_TYPES.has(type) && !('enum' in schema) && !('const' in schema);
  return Type.Unsafe<Static<T> | null>(
    plainScalar ? { ...schema, type: [type, 'null'] } : Type.Union([schema, Type.Null()]),
  );
}
export const IdParams = Type.Object({ id: Uuid });
/** `turnstile_token` of a public body the bot check guards (platform/bot-protection.ts). */
export const TurnstileToken = Type.Optional(
  Type.String({ maxLength: 4096, description: 'Required when bot protection is enabled' }),
);
export const MessageBody = Type.Object({ message: Type.String() });

/**
 * A request body: properties the route does not declare are dropped before the
 * handler sees them, so a body can never set a column the route did not mean to expose.
 * `atLeastOne` (PATCH): one of the declared properties must be there. Written as
 * "any of: required a, required b, ..." because `minProperties` is checked before the
 * unknown properties are dropped, so `{ "foo": 1 }` would pass it. `example`: a short, realistic body for
 * the OpenAPI document (a test checks it is valid).
 */
export const Body = <T extends Parameters<typeof Type.Object>[0]>(
  properties: T,
  options: { atLeastOne?: boolean; example?: Record<string, unknown> } = {},
) =>
  Type.Object(properties, {
    additionalProperties: false,
    ...(options.atLeastOne ? { anyOf: Object.keys(properties).map((name) => ({ required: [name] })) } : {}),
    ...(options.example ? { examples: [options.example] } : {}),
  });

const schemaNames = new Set<string>();

/**
 * A resource schema with a name: the OpenAPI document lists it once under `components.schemas`
 * and refers to it by `$ref` (generated clients get a type of that name). A name is given once:
 * two schemas of one name would be merged into one in the document.
 */
export function named<T extends TSchema>(name: string, schema: T): T {
  if (schemaNames.has(name)) throw new Error(`schema name ${name} is given twice`);
  schemaNames.add(name);
  return Object.assign(schema, { $id: name });
}
