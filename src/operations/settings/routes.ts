import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requirePermission } from '../../platform/auth/hooks.js';
import { created, errorResponses, ListEnvelope, single, SingleEnvelope } from '../../platform/http/envelopes.js';
import {
  ConfigEntry,
  ConfigKeyParams,
  ConfigQuery,
  CreateSettingBody,
  PutSettingBody,
  Setting,
  SettingKeyParams,
  UpdateConfigBody,
} from './schemas.js';
import type { SettingsService } from './service.js';
import { RequestErrors } from '../../platform/http/errors.js';
import { SettingErrors, SystemConfigErrors } from './errors.js';

export async function settingsRoutes(
  fastify: FastifyInstance,
  { settings }: { settings: SettingsService },
): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['Settings'];

  app.get(
    '/v1/settings',
    {
      config: { auth: requirePermission('settings:read') },
      schema: { tags, summary: 'List settings, by key', response: { 200: ListEnvelope(Setting) } },
    },
    async (request) => single(request, await settings.list()),
  );

  app.get(
    '/v1/settings/public',
    {
      schema: {
        tags,
        summary: 'The public settings (no credentials needed)',
        response: { 200: ListEnvelope(Setting) },
      },
    },
    async (request) => single(request, await settings.listPublic()),
  );

  app.get(
    '/v1/settings/:key',
    {
      config: { auth: requirePermission('settings:read') },
      schema: {
        tags,
        summary: 'Get a setting',
        params: SettingKeyParams,
        response: {
          200: SingleEnvelope(Setting),
          ...errorResponses(RequestErrors.validation, SettingErrors.not_found),
        },
      },
    },
    async (request) => single(request, await settings.get(request.params.key)),
  );

  app.post(
    '/v1/settings',
    {
      config: { auth: requirePermission('settings:write') },
      schema: {
        tags,
        summary: 'Create a setting',
        body: CreateSettingBody,
        response: { 201: SingleEnvelope(Setting), ...errorResponses(RequestErrors.validation, SettingErrors.exists) },
      },
    },
    async (request, reply) => {
      const setting = await settings.create(request.body);
      return created(request, reply, '/v1/settings', setting, setting.key);
    },
  );

  app.put(
    '/v1/settings/:key',
    {
      config: { auth: requirePermission('settings:write') },
      schema: {
        tags,
        summary: 'Replace a setting, or create it',
        description: '201 when created, 200 when replaced; description and is_public stay as they were when not sent.',
        params: SettingKeyParams,
        body: PutSettingBody,
        response: {
          200: SingleEnvelope(Setting),
          201: SingleEnvelope(Setting),
          ...errorResponses(RequestErrors.validation),
        },
      },
    },
    async (request, reply) => {
      const { setting, created: isNew } = await settings.put(request.params.key, request.body);
      return isNew ? created(request, reply, '/v1/settings', setting, setting.key) : single(request, setting);
    },
  );

  app.delete(
    '/v1/settings/:key',
    {
      config: { auth: requirePermission('settings:delete') },
      schema: {
        tags,
        summary: 'Delete a setting',
        params: SettingKeyParams,
        response: { 204: Type.Null(), ...errorResponses(RequestErrors.validation, SettingErrors.not_found) },
      },
    },
    async (request, reply) => {
      await settings.remove(request.params.key);
      return reply.status(204).send(null);
    },
  );

  const configTags = ['System config'];

  app.get(
    '/v1/system-config',
    {
      config: { auth: requirePermission('settings:read') },
      schema: {
        tags: configTags,
        summary: 'The pre-seeded config entries, by key (bare array)',
        querystring: ConfigQuery,
        response: { 200: Type.Array(ConfigEntry) },
      },
    },
    async (request) => settings.listConfig(request.query.prefix),
  );

  app.get(
    '/v1/system-config/:key',
    {
      config: { auth: requirePermission('settings:read') },
      schema: {
        tags: configTags,
        summary: 'Get a config entry',
        params: ConfigKeyParams,
        response: {
          200: SingleEnvelope(ConfigEntry),
          ...errorResponses(RequestErrors.validation, SystemConfigErrors.not_found),
        },
      },
    },
    async (request) => single(request, await settings.getConfig(request.params.key)),
  );

  app.patch(
    '/v1/system-config/:key',
    {
      config: { auth: requirePermission('settings:write') },
      schema: {
        tags: configTags,
        summary: "Change a config entry's value (entries are never created or deleted)",
        params: ConfigKeyParams,
        body: UpdateConfigBody,
        response: {
          200: SingleEnvelope(ConfigEntry),
          ...errorResponses(RequestErrors.validation, SystemConfigErrors.invalid_value, SystemConfigErrors.not_found),
        },
      },
    },
    async (request) => single(request, await settings.updateConfig(request.params.key, request.body.value)),
  );
}
