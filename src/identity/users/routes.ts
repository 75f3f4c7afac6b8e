import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { callerOf, requireAuthenticated, requirePermission } from '../../platform/auth/hooks.js';
import {
  errorResponses,
  offsetOf,
  PageEnvelope,
  PageQuery,
  paginated,
  single,
  SingleEnvelope,
  SuccessMessage,
} from '../../platform/http/envelopes.js';
import { IdParams } from '../../platform/http/schemas.js';
import {
  EmailBody,
  LinkMailed,
  EmailParams,
  FlatUser,
  LocaleBody,
  OAuthSignInBody,
  PendingEmailChange,
  Profile,
  TokenBody,
  UpdateUserBody,
  User,
  UserListQuery,
  UsernameBody,
} from './schemas.js';
import type { UsersService } from './service.js';
import { OauthSignInErrors, UserErrors, EmailChangeErrors } from './errors.js';
import { MailErrors, MailedTokenErrors } from '../../platform/mail/token-mail.js';

const tags = ['Users'];
const FlatEnvelope = Type.Object({ data: FlatUser });

export async function userRoutes(fastify: FastifyInstance, { users }: { users: UsersService }): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/v1/users',
    {
      config: { auth: requirePermission('users:read') },
      schema: {
        tags,
        summary: 'List users, oldest first (deleted users are left out unless asked for with deleted=true)',
        querystring: Type.Intersect([PageQuery(20), UserListQuery]),
        response: { 200: PageEnvelope(User) },
      },
    },
    async (request) => {
      const { page, limit, role_id, deleted } = request.query;
      const { rows, total } = await users.list(
        { limit, offset: offsetOf({ page, limit }) },
        { roleId: role_id, deleted },
      );
      return paginated(request, rows, total, { page, limit });
    },
  );

  app.get(
    '/v1/users/me',
    {
      config: { auth: requireAuthenticated({ oauthTokens: true }) },
      schema: {
        tags,
        summary: 'Your own user',
        description: 'A credential without a user (an API key with no owner) gets 404.',
        response: { 200: SingleEnvelope(User), ...errorResponses(UserErrors.credential_without_user) },
      },
    },
    async (request) => single(request, await users.me(callerOf(request))),
  );

  app.get(
    '/v1/users/:id',
    {
      config: { auth: requirePermission('users:read', { orSelf: 'id' }) },
      schema: {
        tags,
        summary: 'Get a user',
        params: IdParams,
        response: { 200: SingleEnvelope(User), ...errorResponses(UserErrors.not_found) },
      },
    },
    async (request) => single(request, await users.get(request.params.id)),
  );

  app.get(
    '/v1/users/:id/profile',
    {
      config: { auth: requirePermission('users:read', { orSelf: 'id' }) },
      schema: {
        tags,
        summary: "A user's profile (from the primary platform account)",
        params: IdParams,
        response: { 200: Profile, ...errorResponses(UserErrors.not_found) },
      },
    },
    async (request) => users.profile(callerOf(request), request.params.id),
  );

  app.patch(
    '/v1/users/:id',
    {
      config: { auth: requirePermission('users:write', { orSelf: 'id' }) },
      schema: {
        tags,
        summary: 'Update a user; only the fields given change',
        description:
          'email changes the address of the email/password account at once, so it is for administrators: another user ' +
          '(users:write, and not a user holding permissions you lack) or yourself as a super admin. Everybody else changes ' +
          "their own address with POST /v1/users/{id}/email/request-change. avatars_enabled=false removes the avatar URLs of all the user's accounts.",
        params: IdParams,
        body: UpdateUserBody,
        response: {
          200: SingleEnvelope(User),
          ...errorResponses(
            UserErrors.avatars_disabled,
            UserErrors.invalid_email,
            UserErrors.invalid_url,
            UserErrors.invalid_username,
            UserErrors.own_email_needs_confirmation,
            UserErrors.no_email_account,
            UserErrors.no_primary_account,
            UserErrors.sign_in_beyond_caller,
            UserErrors.not_found,
            UserErrors.email_in_use,
            UserErrors.username_taken,
          ),
        },
      },
    },
    async (request) => single(request, await users.update(request, callerOf(request), request.params.id, request.body)),
  );

  app.patch(
    '/v1/users/:id/locale',
    {
      config: { auth: requirePermission('users:write', { orSelf: 'id' }) },
      schema: {
        tags,
        summary: 'Set the preferred locale (null clears it)',
        params: IdParams,
        body: LocaleBody,
        response: {
          200: SingleEnvelope(User),
          ...errorResponses(UserErrors.unsupported_locale, UserErrors.sign_in_beyond_caller, UserErrors.not_found),
        },
      },
    },
    async (request) =>
      single(request, await users.setLocale(request, callerOf(request), request.params.id, request.body.locale)),
  );

  app.patch(
    '/v1/users/:id/username',
    {
      config: { auth: requirePermission('users:write', { orSelf: 'id' }) },
      schema: {
        tags,
        summary: 'Change the username',
        params: IdParams,
        body: UsernameBody,
        response: {
          200: SingleEnvelope(User),
          ...errorResponses(
            UserErrors.invalid_username,
            UserErrors.sign_in_beyond_caller,
            UserErrors.not_found,
            UserErrors.username_taken,
          ),
        },
      },
    },
    async (request) =>
      single(request, await users.setUsername(request, callerOf(request), request.params.id, request.body.username)),
  );

  app.delete(
    '/v1/users/:id',
    {
      config: { auth: requirePermission('users:delete') },
      schema: {
        tags,
        summary: 'Delete a user (soft delete; revokes all their sessions and API keys)',
        description: 'The last super admin cannot be deleted (409).',
        params: IdParams,
        response: {
          204: Type.Null(),
          ...errorResponses(UserErrors.sign_in_beyond_caller, UserErrors.not_found, UserErrors.last_super_admin),
        },
      },
    },
    async (request, reply) => {
      await users.remove(request, callerOf(request), request.params.id);
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/v1/users/:id/email/request-change',
    {
      config: { auth: requirePermission('users:write', { orSelf: 'id' }) },
      schema: {
        tags,
        summary: 'Start an email change: a link valid 24 hours goes to the new address',
        description: 'Only for users with an email/password account.',
        params: IdParams,
        body: EmailBody,
        response: {
          200: LinkMailed,
          ...errorResponses(
            EmailChangeErrors.no_email_account,
            EmailChangeErrors.same_address,
            UserErrors.invalid_email,
            UserErrors.sign_in_beyond_caller,
            UserErrors.not_found,
            UserErrors.email_in_use,
            MailErrors.not_sent,
          ),
        },
      },
    },
    async (request) => users.requestEmailChange(request, callerOf(request), request.params.id, request.body.email),
  );

  app.post(
    '/v1/users/email/verify',
    {
      config: { auth: requireAuthenticated() },
      schema: {
        tags,
        summary: 'Confirm an email change with the mailed token',
        body: TokenBody,
        response: { 200: SuccessMessage, ...errorResponses(MailedTokenErrors.invalid, UserErrors.email_in_use) },
      },
    },
    async (request) => {
      await users.completeEmailChange(request, request.body.token);
      return { success: true, message: 'The email address was changed' };
    },
  );

  app.get(
    '/v1/users/:id/email/pending',
    {
      config: { auth: requirePermission('users:read', { orSelf: 'id' }) },
      schema: {
        tags,
        summary: 'The pending email change, if any',
        params: IdParams,
        response: { 200: PendingEmailChange, ...errorResponses(UserErrors.not_found) },
      },
    },
    async (request) => users.pendingEmailChange(request.params.id),
  );

  app.delete(
    '/v1/users/:id/email/pending',
    {
      config: { auth: requirePermission('users:write', { orSelf: 'id' }) },
      schema: {
        tags,
        summary: 'Cancel the pending email change',
        params: IdParams,
        response: {
          200: SuccessMessage,
          ...errorResponses(EmailChangeErrors.none_pending, UserErrors.sign_in_beyond_caller, UserErrors.not_found),
        },
      },
    },
    async (request) => users.cancelEmailChange(callerOf(request), request.params.id),
  );

  app.post(
    '/v1/users/oauth',
    {
      config: { auth: requireAuthenticated() },
      // Before the body is validated (as the guard's checks are): any other caller gets 401, not a hint about the input.
      onRequest: async (request) => {
        if (request.caller && !request.caller.isSystem) throw OauthSignInErrors.system_key_only();
      },
      schema: {
        tags,
        summary: 'Social sign-in: create or update the account of a provider identity (system key only)',
        description:
          'A new identity whose email matches an existing user is linked to that user; otherwise a user is created ' +
          '(username derived from name) with role_user. Any caller other than the system key gets 401.',
        body: OAuthSignInBody,
        response: {
          200: FlatEnvelope,
          ...errorResponses(
            OauthSignInErrors.provider_disabled,
            OauthSignInErrors.provider_id_empty,
            OauthSignInErrors.registration_disabled,
            OauthSignInErrors.unknown_provider,
            OauthSignInErrors.name_empty,
            OauthSignInErrors.system_key_only,
            UserErrors.invalid_email,
            UserErrors.invalid_url,
            UserErrors.deleted,
          ),
        },
      },
    },
    async (request) => {
      if (!callerOf(request).isSystem) throw OauthSignInErrors.system_key_only();
      return { data: await users.oauthSignIn(request, request.body) };
    },
  );

  app.get(
    '/v1/users/email/:email',
    {
      config: { auth: requireAuthenticated() },
      schema: {
        tags,
        summary: 'Find a user by email address',
        description:
          'The system key (and super admins) may look up any address; everybody else only their own (403 otherwise).',
        params: EmailParams,
        response: { 200: FlatEnvelope, ...errorResponses(UserErrors.email_lookup_not_own, UserErrors.email_not_found) },
      },
    },
    async (request) => ({ data: await users.findByEmail(callerOf(request), request.params.email) }),
  );
}
