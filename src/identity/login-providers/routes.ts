import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { callerOf, requirePermission } from '../../platform/auth/hooks.js';
import { errorResponses, single, SingleEnvelope } from '../../platform/http/envelopes.js';
import {
  EnabledBody,
  Platform,
  PlatformData,
  PlatformList,
  PlatformParams,
  SettingsBody,
  SettingsResult,
} from './schemas.js';
import type { LoginProvidersService } from './service.js';
import { PlatformErrors } from './errors.js';

const tags = ['Platforms'];

export async function loginProviderRoutes(
  fastify: FastifyInstance,
  { loginProviders }: { loginProviders: LoginProvidersService },
): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/v1/platforms',
    {
      schema: { tags, summary: 'All login platforms (no credentials needed)', response: { 200: PlatformList } },
    },
    async () => ({ data: await loginProviders.list() }),
  );

  app.get(
    '/v1/platforms/enabled',
    {
      schema: { tags, summary: 'The enabled login platforms (no credentials needed)', response: { 200: PlatformList } },
    },
    async () => ({ data: await loginProviders.listEnabled() }),
  );

  app.get(
    '/v1/platforms/:id_or_slug',
    {
      schema: {
        tags,
        summary: 'A login platform by id or slug (no credentials needed)',
        params: PlatformParams,
        response: { 200: SingleEnvelope(Platform), ...errorResponses(PlatformErrors.not_found) },
      },
    },
    async (request) => single(request, await loginProviders.get(request.params.id_or_slug)),
  );

  app.patch(
    '/v1/platforms/:id_or_slug/enabled',
    {
      config: { auth: requirePermission('settings:write') },
      schema: {
        tags,
        summary: 'Enable or disable a login platform',
        description:
          'A disabled platform refuses new logins and registrations; users keep access through their other platforms.',
        params: PlatformParams,
        body: EnabledBody,
        response: { 200: PlatformData, ...errorResponses(PlatformErrors.not_found) },
      },
    },
    async (request) => ({
      data: await loginProviders.setEnabled(
        request,
        callerOf(request),
        request.params.id_or_slug,
        request.body.enabled,
      ),
    }),
  );

  app.patch(
    '/v1/platforms/:id_or_slug/settings',
    {
      config: { auth: requirePermission('settings:write') },
      schema: {
        tags,
        summary: "Change a platform's switches",
        description:
          "Only the fields sent change. Each changed value writes a `platform_setting_changed` audit event; with no field the platform is returned unchanged ('No changes requested').",
        params: PlatformParams,
        body: SettingsBody,
        response: { 200: SettingsResult, ...errorResponses(PlatformErrors.not_found) },
      },
      // A request with no body at all asks for no change, like `{}`.
      preValidation: async (request) => {
        (request as { body: unknown }).body ??= {};
      },
    },
    async (request) =>
      loginProviders.updateSettings(request, callerOf(request), request.params.id_or_slug, request.body),
  );
}
