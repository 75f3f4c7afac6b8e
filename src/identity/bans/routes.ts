import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { callerOf, requirePermission } from '../../platform/auth/hooks.js';
import { errorResponses, SuccessMessage } from '../../platform/http/envelopes.js';
import { IdParams } from '../../platform/http/schemas.js';
import { UserErrors } from '../users/errors.js';
import { BanErrors } from './errors.js';
import { BanBody, BanData, BanHistory, BanStatus } from './schemas.js';
import type { BansService } from './service.js';

const tags = ['Bans'];

export async function banRoutes(fastify: FastifyInstance, { bans }: { bans: BansService }): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/v1/users/:id/ban',
    {
      config: { auth: requirePermission('users:read', { orSelf: 'id' }) },
      schema: {
        tags,
        summary: 'Whether the user is banned now, and the ban in force',
        params: IdParams,
        response: { 200: BanStatus, ...errorResponses(BanErrors.user_not_found) },
      },
    },
    async (request) => bans.status(request.params.id),
  );

  app.post(
    '/v1/users/:id/ban',
    {
      config: { auth: requirePermission('users:ban') },
      schema: {
        tags,
        summary: 'Ban a user: their sessions end and none of their credentials works until the ban ends',
        description:
          'duration_seconds null or absent: permanent; otherwise the ban ends by itself after that many seconds. ' +
          'API keys of the user stay but are refused while the ban lasts (system keys serve the installation and are not). ' +
          'Signing in answers 403 `auth.banned`, naming the end. You cannot ban yourself; only a super admin can ban a super admin, ' +
          'and nobody a user holding permissions they lack. A user already banned answers 409: lift the ban to change it.',
        params: IdParams,
        body: BanBody,
        response: {
          200: BanData,
          ...errorResponses(
            BanErrors.self,
            BanErrors.super_admin,
            UserErrors.sign_in_beyond_caller,
            BanErrors.user_not_found,
            BanErrors.already_banned,
          ),
        },
      },
    },
    async (request) => ({ data: await bans.ban(request, callerOf(request), request.params.id, request.body ?? {}) }),
  );

  app.delete(
    '/v1/users/:id/ban',
    {
      config: { auth: requirePermission('users:ban') },
      schema: {
        tags,
        summary: 'Lift the ban in force (the history keeps it)',
        description:
          "Only for users who hold nothing beyond your own permissions (a super admin's ban is lifted by a super admin).",
        params: IdParams,
        response: {
          200: SuccessMessage,
          ...errorResponses(UserErrors.sign_in_beyond_caller, BanErrors.user_not_found, BanErrors.not_banned),
        },
      },
    },
    async (request) => {
      await bans.unban(request, callerOf(request), request.params.id);
      return { success: true, message: 'User unbanned' };
    },
  );

  app.get(
    '/v1/users/:id/bans',
    {
      config: { auth: requirePermission('users:read') },
      schema: {
        tags,
        summary: "The user's bans, newest first, with unbanned_at and unbanned_by of those lifted",
        params: IdParams,
        response: { 200: BanHistory, ...errorResponses(BanErrors.user_not_found) },
      },
    },
    async (request) => ({ data: await bans.history(request.params.id) }),
  );
}
