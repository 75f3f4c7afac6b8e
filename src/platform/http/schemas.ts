import { Type } from 'typebox';

/** Shared field schemas. */
export const Uuid = Type.String({ format: 'uuid' });
/** A timestamp: handlers return Date objects, the serialiser writes ISO 8601. */
export const DateTime = Type.Unsafe<Date | string>({ type: 'string', format: 'date-time' });
export const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);
export const IdParams = Type.Object({ id: Uuid });
export const MessageBody = Type.Object({ message: Type.String() });

/**
 * A request body: properties the route does not declare are dropped before the
 * handler sees them, so a body can never set a column the route did not mean to expose.
 */
export const Body = <T extends Parameters<typeof Type.Object>[0]>(properties: T, options: { minProperties?: number } = {}) =>
  Type.Object(properties, { ...options, additionalProperties: false });
