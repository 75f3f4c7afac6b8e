import { Type, type TSchema } from 'typebox';
import { compileBodyCheck } from '../../platform/http/validation.js';

/**
 * The shape each pre-seeded config entry's value must have: the service itself reads these, so a
 * PATCH with a value it could not use is refused with 400 instead of breaking the feature later.
 * An entry listed here must be seeded by a migration (and the other way round: settings.test.ts).
 */
const CONFIG_VALUES: Record<string, TSchema> = {
  'gps.latest_cache_ttl_secs': Type.Integer({ minimum: 1, maximum: 86_400 }),
  'map.default_center': Type.Object(
    {
      latitude: Type.Number({ minimum: -90, maximum: 90 }),
      longitude: Type.Number({ minimum: -180, maximum: 180 }),
      zoom: Type.Integer({ minimum: 0, maximum: 22 }),
    },
    { additionalProperties: false },
  ),
  'tracking.units': Type.Union([Type.Literal('metric'), Type.Literal('imperial'), Type.Literal('nautical')]),
  'trips.default_gps_logging': Type.Boolean(),
};

export const CONFIG_KEYS = Object.keys(CONFIG_VALUES).sort();

// Checked as `{ value }` so that the message names the body field.
const checks = new Map(Object.entries(CONFIG_VALUES).map(([key, schema]) => [key, compileBodyCheck(Type.Object({ value: schema }))]));

/** Why `value` cannot be the value of config entry `key`, or undefined when it can. */
export function configValueProblem(key: string, value: unknown): string | undefined {
  return checks.get(key)?.({ value });
}
