import { Type, type TSchema } from 'typebox';
import { compileBodyCheck } from '../../platform/http/validation.js';

/**
 * The shape the value of each config entry the service itself reads must have: a PATCH with a value it
 * could not use is refused with 400 instead of breaking the feature later. Entries kept for client apps
 * (tracking.units, map.default_center) take any JSON value, as the interface says. Each key listed here
 * is seeded by a migration (settings.test.ts checks).
 */
const CONFIG_VALUES: Record<string, TSchema> = {
  'gps.latest_cache_ttl_secs': Type.Integer({ minimum: 1, maximum: 86_400 }),
  'trips.default_gps_logging': Type.Boolean(),
  'tracking.self_service': Type.Boolean(),
  // Days kept; null keeps for ever. At most 100 years.
  'gps.retention_days': Type.Union([Type.Null(), Type.Integer({ minimum: 1, maximum: 36_500 })]),
  'audit.retention_days': Type.Union([Type.Null(), Type.Integer({ minimum: 1, maximum: 36_500 })]),
  'events.retention_days': Type.Union([Type.Null(), Type.Integer({ minimum: 1, maximum: 36_500 })]),
};

export const CONFIG_KEYS = Object.keys(CONFIG_VALUES).sort();

// Checked as `{ value }` so that the message names the body field.
const checks = new Map(
  Object.entries(CONFIG_VALUES).map(([key, schema]) => [key, compileBodyCheck(Type.Object({ value: schema }))]),
);

// Plain JSON Schemas (without TypeBox's symbol keys), made once.
const VALUE_SCHEMAS = new Map(
  Object.entries(CONFIG_VALUES).map(([key, schema]) => [key, JSON.parse(JSON.stringify(schema)) as unknown]),
);

/**
 * The JSON Schema of the values config entry `key` takes, or null when it takes any JSON value: clients offer a
 * field of that type (a checkbox, a number within its limits) instead of a JSON editor.
 */
export const configValueSchema = (key: string): unknown => VALUE_SCHEMAS.get(key) ?? null;

/** Why `value` cannot be the value of config entry `key`, or undefined when it can. */
export function configValueProblem(key: string, value: unknown): string | undefined {
  return checks.get(key)?.({ value });
}
