import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { callerOf } from '../../platform/auth/hooks.js';
import { errorResponses } from '../../platform/http/envelopes.js';
import { SESSION_AUTH, sessionOnly } from '../sessions/index.js';
import { SessionErrors } from '../sessions/errors.js';
import { NoticeSettings, NoticeSettingsBody } from './schemas.js';
import type { SecurityNotices } from './service.js';

const tags = ['Users'];
const own = { config: { auth: SESSION_AUTH }, onRequest: sessionOnly };

export async function securityNoticeRoutes(
  fastify: FastifyInstance,
  { notices }: { notices: SecurityNotices },
): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/v1/users/me/security-notifications',
    {
      ...own,
      schema: {
        tags,
        summary: 'Which security notices you get by mail',
        description:
          'A session only. New sign-in and new API key notices can be turned off; the others are always sent.',
        response: { 200: NoticeSettings, ...errorResponses(SessionErrors.session_required) },
      },
    },
    async (request) => notices.settingsOf(callerOf(request)),
  );

  app.patch(
    '/v1/users/me/security-notifications',
    {
      ...own,
      schema: {
        tags,
        summary: 'Turn the optional security notices on or off',
        description: 'A session only.',
        body: NoticeSettingsBody,
        response: { 200: NoticeSettings, ...errorResponses(SessionErrors.session_required) },
      },
    },
    async (request) => notices.updateSettings(callerOf(request), request.body),
  );
}
