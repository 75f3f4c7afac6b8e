import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { callerOf, requireOwnAccount, userIdOf } from '../../platform/auth/hooks.js';
import { errorResponses, single, SingleEnvelope } from '../../platform/http/envelopes.js';
import { AuthErrors } from '../../platform/http/errors.js';
import { Preferences, PreferencesBody } from './schemas.js';
import type { PreferencesService } from './service.js';
import { PreferenceErrors } from './errors.js';

const tags = ['Users'];
const later =
  'The console shows speeds, distances, times and coordinates this way; mails write their times, and export files take the day in their names, in the time zone.';

export async function preferenceRoutes(
  fastify: FastifyInstance,
  { preferences }: { preferences: PreferencesService },
): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/v1/users/me/preferences',
    {
      config: { auth: requireOwnAccount('preferences:read') },
      schema: {
        tags,
        summary: 'Your units, time zone and coordinate format',
        description: `Defaults until you change them: kmh, km, the browser's time zone (null), decimal. ${later}`,
        response: { 200: SingleEnvelope(Preferences), ...errorResponses(AuthErrors.user_required) },
      },
    },
    async (request) => single(request, await preferences.of(userIdOf(callerOf(request)))),
  );

  app.patch(
    '/v1/users/me/preferences',
    {
      config: { auth: requireOwnAccount('preferences:write') },
      schema: {
        tags,
        summary: 'Change your preferences (at least one field); answers all of them',
        description:
          'time_zone is an IANA name (Europe/Berlin), kept as the server spells it; null goes back to the browser’s.',
        body: PreferencesBody,
        response: {
          200: SingleEnvelope(Preferences),
          ...errorResponses(PreferenceErrors.unknown_time_zone, AuthErrors.user_required),
        },
      },
    },
    async (request) => single(request, await preferences.update(userIdOf(callerOf(request)), request.body)),
  );
}
