import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { callerOf, requirePermission } from '../../platform/auth/hooks.js';
import {
  created,
  errorResponses,
  offsetOf,
  PageEnvelope,
  PageQuery,
  paginated,
  single,
  SingleEnvelope,
} from '../../platform/http/envelopes.js';
import { IdParams } from '../../platform/http/schemas.js';
import { CreateDeviceBody, Device, UpdateDeviceBody } from './schemas.js';
import type { DevicesService } from './service.js';
import { RequestErrors } from '../../platform/http/errors.js';
import { DeviceErrors } from './errors.js';

const tags = ['Devices'];
const linkRule =
  'With api_key_id, that key is linked to the device (a key you own, or a system key); any key linked before is unlinked.';

export async function deviceRoutes(fastify: FastifyInstance, { devices }: { devices: DevicesService }): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/v1/devices',
    {
      config: { auth: requirePermission('devices:read') },
      schema: {
        tags,
        summary: 'List devices, newest first',
        querystring: PageQuery(10),
        response: { 200: PageEnvelope(Device) },
      },
    },
    async (request) => {
      const { rows, total } = await devices.page(request.query.limit, offsetOf(request.query));
      return paginated(request, rows, total, request.query);
    },
  );

  app.get(
    '/v1/devices/:id',
    {
      config: { auth: requirePermission('devices:read') },
      schema: {
        tags,
        summary: 'Get a device',
        params: IdParams,
        response: { 200: SingleEnvelope(Device), ...errorResponses(RequestErrors.validation, DeviceErrors.not_found) },
      },
    },
    async (request) => single(request, await devices.get(request.params.id)),
  );

  app.post(
    '/v1/devices',
    {
      config: { auth: requirePermission('devices:write') },
      schema: {
        tags,
        summary: 'Create a device',
        description: linkRule,
        body: CreateDeviceBody,
        response: {
          201: SingleEnvelope(Device),
          ...errorResponses(DeviceErrors.unknown_api_key, RequestErrors.validation, DeviceErrors.api_key_not_linkable),
        },
      },
    },
    async (request, reply) =>
      created(request, reply, '/v1/devices', await devices.create(callerOf(request), request.body)),
  );

  app.patch(
    '/v1/devices/:id',
    {
      config: { auth: requirePermission('devices:write') },
      schema: {
        tags,
        summary: 'Update a device (at least one field)',
        description: linkRule,
        params: IdParams,
        body: UpdateDeviceBody,
        response: {
          200: SingleEnvelope(Device),
          ...errorResponses(
            DeviceErrors.unknown_api_key,
            RequestErrors.validation,
            DeviceErrors.api_key_not_linkable,
            DeviceErrors.not_found,
          ),
        },
      },
    },
    async (request) => single(request, await devices.update(callerOf(request), request.params.id, request.body)),
  );

  app.delete(
    '/v1/devices/:id',
    {
      config: { auth: requirePermission('devices:delete') },
      schema: {
        tags,
        summary: 'Delete a device (its points stay, without device)',
        params: IdParams,
        response: { 204: Type.Null(), ...errorResponses(RequestErrors.validation, DeviceErrors.not_found) },
      },
    },
    async (request, reply) => {
      await devices.remove(request.params.id);
      return reply.status(204).send(null);
    },
  );
}
