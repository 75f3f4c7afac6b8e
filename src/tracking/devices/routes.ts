import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { callerOf, requireTracking } from '../../platform/auth/hooks.js';
import {
  created,
  errorResponses,
  locateCreated,
  offsetOf,
  PageEnvelope,
  PageQuery,
  paginated,
  single,
  SingleEnvelope,
} from '../../platform/http/envelopes.js';
import { IdParams } from '../../platform/http/schemas.js';
import {
  CreateDeviceBody,
  Device,
  MAP_DEVICES_PAGE,
  MapDevicesPage,
  MapDevicesQuery,
  NewDeviceKey,
  ReplaceKeyBody,
  UpdateDeviceBody,
} from './schemas.js';
import type { DevicesService } from './service.js';
import { DatabaseErrors, RequestErrors, type ErrorDefinition } from '../../platform/http/errors.js';
import type { SharingService } from '../sharing/service.js';
import { requestScopeOf } from '../sharing/index.js';
import { SharingErrors } from '../sharing/errors.js';
import { TransferBody } from '../sharing/schemas.js';
import { DeviceErrors } from './errors.js';

const tags = ['Devices'];
const linkRule =
  'With api_key_id, that key is linked to the device (a key you own, or a system key); any key linked before is unlinked.';

export async function deviceRoutes(
  fastify: FastifyInstance,
  {
    devices,
    sharing,
    keyErrors,
  }: {
    devices: DevicesService;
    sharing: Pick<SharingService, 'scopeOf'>;
    /** What making a device's key may answer beyond the device's errors (the API-key module declares them). */
    keyErrors: readonly ErrorDefinition[];
  },
): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const scopeOf = requestScopeOf(sharing);
  const scoped = SharingErrors.self_service_off;

  app.get(
    '/v1/devices',
    {
      config: { auth: requireTracking('devices:read') },
      schema: {
        tags,
        summary: 'List devices, newest first',
        querystring: PageQuery(10),
        response: { 200: PageEnvelope(Device), ...errorResponses(scoped) },
      },
    },
    async (request) => {
      const scope = await scopeOf(request);
      const { rows, total } = await devices.page(scope, request.query.limit, offsetOf(request.query));
      return paginated(request, rows, total, request.query);
    },
  );

  app.get(
    '/v1/map/devices',
    {
      config: { auth: requireTracking('devices:read') },
      schema: {
        tags,
        summary: 'Every device you may see, for a map: pages of up to 5,000, in the order of their ids',
        description:
          "Beyond the spec, for clients that show every device at once (the console's map: ten thousand devices " +
          'in two requests, where GET /v1/devices takes a hundred). Each device as GET /v1/devices has it. ' +
          'Follow `next` (as `after`) until it is null.',
        querystring: MapDevicesQuery,
        response: { 200: MapDevicesPage, ...errorResponses(RequestErrors.validation, scoped) },
      },
    },
    async (request) => {
      const { limit, after } = request.query;
      const { rows, more } = await devices.chunk(await scopeOf(request), limit ?? MAP_DEVICES_PAGE, after);
      return { data: rows, next: more ? (rows.at(-1)?.id ?? null) : null };
    },
  );

  app.get(
    '/v1/devices/:id',
    {
      config: { auth: requireTracking('devices:read') },
      schema: {
        tags,
        summary: 'Get a device',
        params: IdParams,
        response: {
          200: SingleEnvelope(Device),
          ...errorResponses(RequestErrors.validation, DeviceErrors.not_found, scoped),
        },
      },
    },
    async (request) => single(request, await devices.get(await scopeOf(request), request.params.id)),
  );

  app.post(
    '/v1/devices',
    {
      config: { auth: requireTracking('devices:write') },
      schema: {
        tags,
        summary: 'Create a device',
        description: linkRule,
        body: CreateDeviceBody,
        response: {
          201: SingleEnvelope(Device),
          ...errorResponses(
            DeviceErrors.unknown_api_key,
            RequestErrors.validation,
            DeviceErrors.api_key_not_linkable,
            scoped,
          ),
        },
      },
    },
    async (request, reply) => {
      const scope = await scopeOf(request);
      return created(request, reply, '/v1/devices', await devices.create(callerOf(request), scope, request.body));
    },
  );

  app.patch(
    '/v1/devices/:id',
    {
      config: { auth: requireTracking('devices:write') },
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
            DeviceErrors.not_owner,
            scoped,
          ),
        },
      },
    },
    async (request) => {
      const scope = await scopeOf(request);
      return single(request, await devices.update(callerOf(request), scope, request.params.id, request.body));
    },
  );

  app.post(
    '/v1/devices/:id/key',
    {
      config: { auth: requireTracking('devices:write') },
      schema: {
        tags,
        summary: 'Give the device a new API key; the key it reported with stops working at once',
        description:
          'The owner (or a holder of devices:write) gets a new key linked to the device, its value in this answer only; ' +
          'the key linked before is revoked in the same transaction (401 from the next request on, on every node). ' +
          'The new key is yours: replacing a key of yours it keeps its name and scopes, else it gets those Connect a ' +
          'device asks for (gps:write, or gps:write_own without it). Its scopes must be within your permissions; ' +
          'api_keys:write is not needed. A device reporting with a system key answers 409. A session signed in more ' +
          'than 15 minutes ago gives current_password or signs in again, as for POST /v1/api-keys. The body is optional.',
        params: IdParams,
        body: ReplaceKeyBody,
        response: {
          201: NewDeviceKey,
          ...errorResponses(
            RequestErrors.validation,
            DeviceErrors.not_found,
            DeviceErrors.not_owner,
            scoped,
            ...keyErrors,
          ),
        },
      },
      // Without a body: validated as `{}`.
      preValidation: async (request) => {
        request.body ??= {};
      },
    },
    async (request, reply) => {
      const scope = await scopeOf(request);
      const { id } = request.params;
      const made = await devices.replaceKey(request, callerOf(request), scope, id, request.body.current_password);
      locateCreated(request, reply, `/v1/api-keys/${made.id}`);
      return made;
    },
  );

  app.delete(
    '/v1/devices/:id',
    {
      config: { auth: requireTracking('devices:delete') },
      schema: {
        tags,
        summary: 'Delete a device (its points stay, without device)',
        params: IdParams,
        response: {
          204: Type.Null(),
          ...errorResponses(RequestErrors.validation, DeviceErrors.not_found, DeviceErrors.not_owner, scoped),
        },
      },
    },
    async (request, reply) => {
      await devices.remove(await scopeOf(request), request.params.id);
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/v1/devices/:id/transfer',
    {
      config: { auth: requireTracking('devices:write') },
      schema: {
        tags,
        summary: 'Hand a device to another user',
        description:
          'The owner (or a holder of devices:write) makes user_id the owner. The device’s own shares end; its points ' +
          'and trips stay with it.',
        params: IdParams,
        body: TransferBody,
        response: {
          200: SingleEnvelope(Device),
          ...errorResponses(
            RequestErrors.validation,
            DatabaseErrors.missing_reference,
            DeviceErrors.not_found,
            DeviceErrors.not_owner,
            scoped,
          ),
        },
      },
    },
    async (request) => {
      const scope = await scopeOf(request);
      const { id } = request.params;
      return single(request, await devices.transfer(request, callerOf(request), scope, id, request.body.user_id));
    },
  );
}
