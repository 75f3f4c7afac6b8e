import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requirePermission } from '../../platform/auth/hooks.js';
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
import {
  Contact,
  ContactParams,
  CreateContactBody,
  CreateLocationBody,
  Location,
  LocationWithContacts,
  UpdateContactBody,
  UpdateLocationBody,
} from './schemas.js';
import type { LocationsService } from './service.js';
import { RequestErrors } from '../../platform/http/errors.js';
import { LocationErrors } from './errors.js';

const tags = ['Locations'];

export async function locationRoutes(
  fastify: FastifyInstance,
  { locations }: { locations: LocationsService },
): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/v1/locations',
    {
      config: { auth: requirePermission('locations:read') },
      schema: {
        tags,
        summary: 'List locations by name',
        querystring: PageQuery(10),
        response: { 200: PageEnvelope(Location) },
      },
    },
    async (request) => {
      const { rows, total } = await locations.page(request.query.limit, offsetOf(request.query));
      return paginated(request, rows, total, request.query);
    },
  );

  app.get(
    '/v1/locations/:id',
    {
      config: { auth: requirePermission('locations:read') },
      schema: {
        tags,
        summary: 'Get a location with its contacts',
        params: IdParams,
        response: {
          200: SingleEnvelope(LocationWithContacts),
          ...errorResponses(RequestErrors.validation, LocationErrors.not_found),
        },
      },
    },
    async (request) => single(request, await locations.get(request.params.id)),
  );

  app.post(
    '/v1/locations',
    {
      config: { auth: requirePermission('locations:write') },
      schema: {
        tags,
        summary: 'Create a location, with its contacts in the same transaction',
        body: CreateLocationBody,
        response: { 201: SingleEnvelope(LocationWithContacts), ...errorResponses(RequestErrors.validation) },
      },
    },
    async (request, reply) => created(request, reply, '/v1/locations', await locations.create(request.body)),
  );

  app.patch(
    '/v1/locations/:id',
    {
      config: { auth: requirePermission('locations:write') },
      schema: {
        tags,
        summary: 'Update a location (at least one field; contacts are not changed)',
        params: IdParams,
        body: UpdateLocationBody,
        response: {
          200: SingleEnvelope(LocationWithContacts),
          ...errorResponses(RequestErrors.validation, LocationErrors.not_found),
        },
      },
    },
    async (request) => single(request, await locations.update(request.params.id, request.body)),
  );

  app.delete(
    '/v1/locations/:id',
    {
      config: { auth: requirePermission('locations:delete') },
      schema: {
        tags,
        summary: 'Delete a location and its contacts (trips and templates keep no reference)',
        params: IdParams,
        response: { 204: Type.Null(), ...errorResponses(RequestErrors.validation, LocationErrors.not_found) },
      },
    },
    async (request, reply) => {
      await locations.remove(request.params.id);
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/v1/locations/:id/contacts',
    {
      config: { auth: requirePermission('locations:write') },
      schema: {
        tags,
        summary: 'Add a contact to a location',
        params: IdParams,
        body: CreateContactBody,
        response: {
          201: SingleEnvelope(Contact),
          ...errorResponses(RequestErrors.validation, LocationErrors.not_found),
        },
      },
    },
    async (request, reply) =>
      created(
        request,
        reply,
        `/v1/locations/${request.params.id}/contacts`,
        await locations.addContact(request.params.id, request.body),
      ),
  );

  app.patch(
    '/v1/locations/:id/contacts/:cid',
    {
      config: { auth: requirePermission('locations:write') },
      schema: {
        tags,
        summary: "Update a location's contact (at least one field)",
        params: ContactParams,
        body: UpdateContactBody,
        response: {
          200: SingleEnvelope(Contact),
          ...errorResponses(RequestErrors.validation, LocationErrors.contact_not_found),
        },
      },
    },
    async (request) =>
      single(request, await locations.updateContact(request.params.id, request.params.cid, request.body)),
  );

  app.delete(
    '/v1/locations/:id/contacts/:cid',
    {
      config: { auth: requirePermission('locations:write') },
      schema: {
        tags,
        summary: "Delete a location's contact",
        params: ContactParams,
        response: { 204: Type.Null(), ...errorResponses(RequestErrors.validation, LocationErrors.contact_not_found) },
      },
    },
    async (request, reply) => {
      await locations.removeContact(request.params.id, request.params.cid);
      return reply.status(204).send(null);
    },
  );
}
