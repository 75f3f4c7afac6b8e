import type { ColumnType, Generated } from 'kysely';

/** Timestamp columns: read as Date, written as Date or ISO string, defaulted by the database. */
export type CreatedAt = ColumnType<Date, Date | string | undefined, never>;
export type UpdatedAt = ColumnType<Date, Date | string | undefined, Date | string>;
export type Json = ColumnType<unknown, string, string>;
/** Read as an object; written as JSON text. */
export type JsonObject = ColumnType<Record<string, unknown>, string | undefined, string>;
export type Id = Generated<string>;
