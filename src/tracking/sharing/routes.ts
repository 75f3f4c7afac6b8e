import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { callerOf, requireTracking } from '../../platform/auth/hooks.js';
import { DatabaseErrors, RequestErrors } from '../../platform/http/errors.js';
import { created, errorResponses, single, SingleEnvelope } from '../../platform/http/envelopes.js';
import { IdParams } from '../../platform/http/schemas.js';
import { SharingErrors } from './errors.js';
import { requestScopeOf } from './request-scope.js';
import { DeviceErrors } from '../devices/errors.js';
import { CreateOwnerShareBody, CreateShareBody, Share, ShareParams, SharesQuery, UpdateShareBody } from './schemas.js';
import type { NamedShare, SharingService } from './service.js';

const tags = ['Sharing'];
const ShareList = Type.Object({ data: Type.Array(Share) });
const writeErrors = [
  RequestErrors.validation,
  DatabaseErrors.missing_reference,
  SharingErrors.share_not_found,
  DeviceErrors.not_found,
  SharingErrors.not_owner,
  SharingErrors.not_a_member,
  SharingErrors.self_share,
  SharingErrors.expired,
  SharingErrors.too_many,
  SharingErrors.unknown_grantee,
  SharingErrors.self_service_off,
];

/** Shares of devices with users and groups (docs/sharing.md). */
export async function sharingRoutes(fastify: FastifyInstance, { sharing }: { sharing: SharingService }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  /** The self-service switch applies to sharing as to the rest of tracking. */
  const inScope = requestScopeOf(sharing);
  const answer = (request: FastifyRequest, reply: FastifyReply, result: { share: NamedShare; created: boolean }) =>
    result.created ? created(request, reply, '/v1/shares', result.share) : single(request, result.share);

  app.get(
    '/v1/devices/:id/shares',
    {
      config: { auth: requireTracking('devices:write') },
      schema: {
        tags,
        summary: 'The shares of a device (and its owner’s shares of every device)',
        params: IdParams,
        response: { 200: ShareList, ...errorResponses(...writeErrors) },
      },
    },
    async (request) => {
      await inScope(request);
      return { data: await sharing.listOfDevice(callerOf(request), request.params.id) };
    },
  );

  app.post(
    '/v1/devices/:id/shares',
    {
      config: { auth: requireTracking('devices:write') },
      schema: {
        tags,
        summary: 'Share a device with a user or a group',
        description:
          'By its owner (or a holder of devices:write). One share per device and user or group: sharing again ' +
          'changes the share (200) instead of adding one (201).',
        params: IdParams,
        body: CreateShareBody,
        response: { 200: SingleEnvelope(Share), 201: SingleEnvelope(Share), ...errorResponses(...writeErrors) },
      },
    },
    async (request, reply) => {
      await inScope(request);
      return answer(
        request,
        reply,
        await sharing.create(request, callerOf(request), { ...request.body, device_id: request.params.id }),
      );
    },
  );

  app.patch(
    '/v1/devices/:id/shares/:share_id',
    {
      config: { auth: requireTracking('devices:write') },
      schema: {
        tags,
        summary: 'Change a share of a device (level, history, end)',
        params: ShareParams,
        body: UpdateShareBody,
        response: { 200: SingleEnvelope(Share), ...errorResponses(...writeErrors) },
      },
    },
    async (request) => {
      await inScope(request);
      const { id, share_id: shareId } = request.params;
      return single(request, await sharing.update(request, callerOf(request), shareId, request.body, id));
    },
  );

  app.delete(
    '/v1/devices/:id/shares/:share_id',
    {
      config: { auth: requireTracking('devices:write') },
      schema: {
        tags,
        summary: 'End a share of a device at once',
        params: ShareParams,
        response: { 204: Type.Null(), ...errorResponses(...writeErrors) },
      },
    },
    async (request, reply) => {
      await inScope(request);
      await sharing.remove(request, callerOf(request), request.params.share_id, request.params.id);
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/v1/shares',
    {
      config: { auth: requireTracking('devices:read') },
      schema: {
        tags,
        summary: 'What I share (outgoing) or what is shared with me (incoming)',
        querystring: SharesQuery,
        response: { 200: ShareList, ...errorResponses(RequestErrors.validation, SharingErrors.self_service_off) },
      },
    },
    async (request) => {
      await inScope(request);
      return { data: await sharing.list(callerOf(request), request.query.direction ?? 'outgoing') };
    },
  );

  app.post(
    '/v1/shares',
    {
      config: { auth: requireTracking('devices:write') },
      schema: {
        tags,
        summary: 'Share one device of mine, or every device of mine (those added later too)',
        body: CreateOwnerShareBody,
        response: { 200: SingleEnvelope(Share), 201: SingleEnvelope(Share), ...errorResponses(...writeErrors) },
      },
    },
    async (request, reply) => {
      await inScope(request);
      return answer(request, reply, await sharing.create(request, callerOf(request), request.body));
    },
  );

  app.patch(
    '/v1/shares/:id',
    {
      config: { auth: requireTracking('devices:write') },
      schema: {
        tags,
        summary: 'Change a share of mine',
        params: IdParams,
        body: UpdateShareBody,
        response: { 200: SingleEnvelope(Share), ...errorResponses(...writeErrors) },
      },
    },
    async (request) => {
      await inScope(request);
      return single(request, await sharing.update(request, callerOf(request), request.params.id, request.body));
    },
  );

  app.delete(
    '/v1/shares/:id',
    {
      config: { auth: requireTracking('devices:write') },
      schema: {
        tags,
        summary: 'End a share of mine at once',
        params: IdParams,
        response: { 204: Type.Null(), ...errorResponses(...writeErrors) },
      },
    },
    async (request, reply) => {
      await inScope(request);
      await sharing.remove(request, callerOf(request), request.params.id);
      return reply.status(204).send(null);
    },
  );
}
