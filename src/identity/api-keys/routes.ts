import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { callerOf, requirePermission } from '../../platform/auth/hooks.js';
import { errorResponses, ListEnvelope, locateCreated, single, SingleEnvelope } from '../../platform/http/envelopes.js';
import { IdParams } from '../../platform/http/schemas.js';
import { Role, RoleIdBody } from '../access/schemas.js';
import {
  ApiKey,
  ApiKeyRoleParams,
  CreateApiKeyBody,
  CreatedApiKey,
  RegeneratedApiKey,
  UpdateApiKeyBody,
} from './schemas.js';
import type { ApiKeysService } from './service.js';
import { ApiKeyErrors } from './errors.js';
import { RoleErrors } from '../access/errors.js';
import { ReauthenticationBody } from '../sign-in/schemas.js';
import { CurrentPasswordErrors, ReauthenticationErrors } from '../sign-in/errors.js';
import { SignInErrors } from '../sign-in-throttle/service.js';

const tags = ['API keys'];
const visibility = 'Super admins see every key; everybody else the keys they own.';
const reauthentication =
  'A session signed in more than 15 minutes ago gives current_password (a wrong one: 400, counted towards the sign-in lockout, 429 once locked) ' +
  'or signs in again (403 auth.reauthentication_required otherwise): a stolen session alone cannot leave a key behind. API keys need neither.';
const reauthenticationErrors = [
  ReauthenticationErrors.reauthentication_required,
  CurrentPasswordErrors.wrong_current_password,
  SignInErrors.locked_out,
] as const;

export async function apiKeyRoutes(fastify: FastifyInstance, { apiKeys }: { apiKeys: ApiKeysService }): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/v1/api-keys',
    {
      config: { auth: requirePermission('api_keys:read') },
      schema: {
        tags,
        summary: 'List API keys (never their values)',
        description: visibility,
        response: { 200: ListEnvelope(ApiKey) },
      },
    },
    async (request) => single(request, await apiKeys.list(callerOf(request))),
  );

  app.get(
    '/v1/api-keys/:id',
    {
      config: { auth: requirePermission('api_keys:read') },
      schema: {
        tags,
        summary: 'Get an API key',
        description: visibility,
        params: IdParams,
        response: { 200: SingleEnvelope(ApiKey), ...errorResponses(ApiKeyErrors.not_found) },
      },
    },
    async (request) => single(request, await apiKeys.get(callerOf(request), request.params.id)),
  );

  app.post(
    '/v1/api-keys',
    {
      config: { auth: requirePermission('api_keys:write') },
      schema: {
        tags,
        summary: 'Create an API key',
        description:
          'The full key is in this response only. Scopes must be covered by your own permissions; ' +
          'is_system and user_id are for super admins. ' +
          reauthentication,
        body: CreateApiKeyBody,
        response: {
          201: CreatedApiKey,
          ...errorResponses(
            ApiKeyErrors.expiry_in_past,
            ApiKeyErrors.owner_not_developer,
            ApiKeyErrors.is_system_super_admin_only,
            ApiKeyErrors.owner_super_admin_only,
            ApiKeyErrors.unknown_owner,
            RoleErrors.scope_beyond_caller,
            ...reauthenticationErrors,
          ),
        },
      },
    },
    async (request, reply) => {
      const key = await apiKeys.create(callerOf(request), request.body, request);
      locateCreated(request, reply, `/v1/api-keys/${key.id}`);
      return key;
    },
  );

  app.patch(
    '/v1/api-keys/:id',
    {
      config: { auth: requirePermission('api_keys:write') },
      schema: {
        tags,
        summary: 'Update an API key',
        params: IdParams,
        body: UpdateApiKeyBody,
        response: {
          200: SingleEnvelope(ApiKey),
          ...errorResponses(
            ApiKeyErrors.expiry_in_past,
            ApiKeyErrors.owner_not_developer,
            ApiKeyErrors.is_system_super_admin_only,
            ApiKeyErrors.owner_super_admin_only,
            ApiKeyErrors.unknown_owner,
            ApiKeyErrors.system_key_super_admin_only,
            RoleErrors.scope_beyond_caller,
            ApiKeyErrors.not_found,
          ),
        },
      },
    },
    async (request) => single(request, await apiKeys.update(callerOf(request), request.params.id, request.body)),
  );

  app.post(
    '/v1/api-keys/:id/regenerate',
    {
      config: { auth: requirePermission('api_keys:write') },
      schema: {
        tags,
        summary: 'Replace the key value; the old value stops working at once',
        description: `System keys: super admins only. The body is optional. ${reauthentication}`,
        params: IdParams,
        body: ReauthenticationBody,
        response: {
          200: RegeneratedApiKey,
          ...errorResponses(
            ApiKeyErrors.system_key_super_admin_only,
            RoleErrors.scope_beyond_caller,
            ApiKeyErrors.not_found,
            ...reauthenticationErrors,
          ),
        },
      },
      // Without a body (as before re-authentication): validated as `{}`.
      preValidation: async (request) => {
        request.body ??= {};
      },
    },
    async (request) => apiKeys.regenerate(callerOf(request), request.params.id, request, request.body.current_password),
  );

  app.delete(
    '/v1/api-keys/:id',
    {
      config: { auth: requirePermission('api_keys:delete') },
      schema: {
        tags,
        summary: 'Delete an API key (system keys cannot be deleted)',
        params: IdParams,
        response: {
          204: Type.Null(),
          ...errorResponses(ApiKeyErrors.system_key_delete, RoleErrors.scope_beyond_caller, ApiKeyErrors.not_found),
        },
      },
    },
    async (request, reply) => {
      await apiKeys.remove(callerOf(request), request.params.id, request);
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/v1/api-keys/:id/roles',
    {
      config: { auth: requirePermission('api_keys:read') },
      schema: {
        tags,
        summary: "An API key's roles",
        params: IdParams,
        response: { 200: ListEnvelope(Role), ...errorResponses(ApiKeyErrors.not_found) },
      },
    },
    async (request) => single(request, await apiKeys.roles(callerOf(request), request.params.id)),
  );

  app.post(
    '/v1/api-keys/:id/roles',
    {
      config: { auth: requirePermission('api_keys:write') },
      schema: {
        tags,
        summary: 'Give an API key a role',
        description: 'You may assign only roles you hold yourself (super admins: any).',
        params: IdParams,
        body: RoleIdBody,
        response: {
          201: ListEnvelope(Role),
          ...errorResponses(
            RoleErrors.not_held,
            ApiKeyErrors.system_key_super_admin_only,
            RoleErrors.scope_beyond_caller,
            ApiKeyErrors.not_found,
            RoleErrors.not_found,
            RoleErrors.already_on_key,
          ),
        },
      },
    },
    async (request, reply) => {
      const roles = await apiKeys.assignRole(callerOf(request), request.params.id, request.body.role_id);
      // The body is the key's roles (self: that list); Location names the new assignment.
      locateCreated(request, reply, `/v1/api-keys/${request.params.id}/roles/${request.body.role_id}`);
      return single(request, roles);
    },
  );

  app.delete(
    '/v1/api-keys/:id/roles/:role_id',
    {
      config: { auth: requirePermission('api_keys:write') },
      schema: {
        tags,
        summary: 'Take a role from an API key',
        params: ApiKeyRoleParams,
        response: {
          204: Type.Null(),
          ...errorResponses(
            RoleErrors.not_held,
            ApiKeyErrors.system_key_super_admin_only,
            RoleErrors.scope_beyond_caller,
            ApiKeyErrors.not_found,
            RoleErrors.not_found,
            RoleErrors.not_on_key,
          ),
        },
      },
    },
    async (request, reply) => {
      await apiKeys.removeRole(callerOf(request), request.params.id, request.params.role_id);
      return reply.status(204).send(null);
    },
  );
}
