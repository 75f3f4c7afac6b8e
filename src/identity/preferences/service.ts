import type { Kysely } from 'kysely';
import type { Static } from 'typebox';
import type { Schema } from '../../platform/db/schema/index.js';
import { createPreferencesRepo } from './repo.js';
import { PreferenceErrors } from './errors.js';
import type { PreferencesBody } from './schemas.js';

/**
 * The time zone as the runtime's Intl names it (`europe/berlin` is `Europe/Berlin`), or 400 when it knows none
 * of that name. Offsets (`+01:00`), which newer runtimes accept as a zone, are not IANA names and are refused.
 */
export function ianaTimeZone(name: string): string {
  if (!/^[A-Za-z]/.test(name)) throw PreferenceErrors.unknown_time_zone();
  try {
    return new Intl.DateTimeFormat('en', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    throw PreferenceErrors.unknown_time_zone();
  }
}

/** Each user's units, time zone and coordinate format (GET and PATCH /v1/users/me/preferences). */
export function createPreferencesService(deps: { db: Kysely<Schema> }) {
  const repo = createPreferencesRepo(deps.db);
  return {
    of: repo.of,

    update(userId: string, input: Static<typeof PreferencesBody>) {
      const { time_zone: timeZone, ...units } = input;
      return repo.update(userId, {
        ...units,
        ...(timeZone === undefined ? {} : { time_zone: timeZone === null ? null : ianaTimeZone(timeZone) }),
      });
    },
  };
}

export type PreferencesService = ReturnType<typeof createPreferencesService>;
