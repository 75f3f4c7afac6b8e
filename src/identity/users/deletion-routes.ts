import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { callerOf, requirePermission } from '../../platform/auth/hooks.js';
import { errorResponses, SuccessMessage } from '../../platform/http/envelopes.js';
import { IdParams } from '../../platform/http/schemas.js';
import { UserErrors } from './errors.js';
import { DeletionStatus, ForceDeleteBody } from './schemas.js';
import type { UsersService } from './service.js';

const tags = ['Users'];

/** The deletion lifecycle after DELETE /v1/users/{id}: its status, cancelling it, and skipping the grace period. */
export async function userDeletionRoutes(fastify: FastifyInstance, { users }: { users: UsersService }): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/v1/admin/users/:id/deletion-status',
    {
      config: { auth: requirePermission('users:read') },
      schema: {
        tags,
        summary: "Where a user's deletion stands",
        description:
          'A deleted user is purged 7 days after deleted_at (scheduled_deletion_at); a purged user answers 404.',
        params: IdParams,
        response: { 200: DeletionStatus, ...errorResponses(UserErrors.not_found) },
      },
    },
    async (request) => users.deletionStatus(request.params.id),
  );

  app.post(
    '/v1/admin/users/:id/cancel-deletion',
    {
      config: { auth: requirePermission('users:write') },
      schema: {
        tags,
        summary: 'Restore a deleted user within the grace period',
        description:
          'Sessions and API keys ended by the deletion stay ended: the user signs in again. Only for users who hold nothing beyond your own permissions (judged on the roles the deleted user still holds).',
        params: IdParams,
        response: {
          200: SuccessMessage,
          ...errorResponses(
            UserErrors.not_scheduled_for_deletion,
            UserErrors.sign_in_beyond_caller,
            UserErrors.not_found,
          ),
        },
      },
    },
    async (request) => {
      await users.cancelDeletion(request, callerOf(request), request.params.id);
      return { success: true, message: 'Deletion cancelled; the user is active again' };
    },
  );

  app.post(
    '/v1/admin/users/:id/force-delete',
    {
      config: { auth: requirePermission('users:delete') },
      schema: {
        tags,
        summary: 'Delete a user at once and for good (skips the grace period; irreversible)',
        description:
          'For an active user or one in the grace period. Removes the user, their accounts, sessions, API keys (system keys ' +
          'pass to the installation), 2FA, bans and reports; the audit trail stays, pseudonymised. The last super admin cannot be deleted (409).',
        params: IdParams,
        body: ForceDeleteBody,
        response: {
          200: SuccessMessage,
          ...errorResponses(UserErrors.sign_in_beyond_caller, UserErrors.not_found, UserErrors.last_super_admin),
        },
      },
    },
    async (request) => {
      await users.forceDelete(request, callerOf(request), request.params.id, request.body.reason);
      return { success: true, message: 'User permanently deleted' };
    },
  );
}
