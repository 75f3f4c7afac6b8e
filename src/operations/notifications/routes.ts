import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { callerOf, requireOwnAccount, userIdOf } from '../../platform/auth/hooks.js';
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
import { AuthErrors, RequestErrors } from '../../platform/http/errors.js';
import { IdParams } from '../../platform/http/schemas.js';
import { NotificationErrors as E } from './errors.js';
import {
  CreateChannelBody,
  DeliveriesQuery,
  NotificationDelivery,
  CreatedNotificationChannel,
  CreateRuleBody,
  NotificationChannel,
  NotificationRule,
  SendResultSchema,
  UpdateChannelBody,
  UpdateRuleBody,
} from './schemas.js';
import type { NotificationsService } from './service.js';
import type { NotificationOutbox } from './outbox.js';

const channelTags = ['Notifications'];
const read = { auth: requireOwnAccount('notifications:read') };
const write = { auth: requireOwnAccount('notifications:write') };
const me = (request: FastifyRequest) => userIdOf(callerOf(request));
const OWN = "Your own only: another user's is not found (404).";

export async function notificationRoutes(
  fastify: FastifyInstance,
  { notifications, outbox }: { notifications: NotificationsService; outbox: Pick<NotificationOutbox, 'page'> },
): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const tags = channelTags;

  app.get(
    '/v1/notification-channels',
    {
      config: read,
      schema: {
        tags,
        summary: 'Your notification channels, oldest first (secrets never shown)',
        querystring: PageQuery(50),
        response: { 200: PageEnvelope(NotificationChannel), ...errorResponses(AuthErrors.user_required) },
      },
    },
    async (request) => {
      const { rows, total } = await notifications.channels(me(request), request.query.limit, offsetOf(request.query));
      return paginated(request, rows, total, request.query);
    },
  );

  app.get(
    '/v1/notification-channels/web-push-key',
    {
      config: read,
      schema: {
        tags,
        summary: "The instance's VAPID public key, for a browser's push subscription (applicationServerKey)",
        response: {
          200: SingleEnvelope(Type.Object({ public_key: Type.String() })),
          ...errorResponses(AuthErrors.user_required),
        },
      },
    },
    async (request) => single(request, await notifications.webPushKey()),
  );

  app.get(
    '/v1/notification-channels/:id',
    {
      config: read,
      schema: {
        tags,
        summary: 'One of your notification channels (secrets never shown)',
        description: OWN,
        params: IdParams,
        response: {
          200: SingleEnvelope(NotificationChannel),
          ...errorResponses(AuthErrors.user_required, E.channel_not_found),
        },
      },
    },
    async (request) => single(request, await notifications.channel(me(request), request.params.id)),
  );

  app.post(
    '/v1/notification-channels',
    {
      config: write,
      schema: {
        tags,
        summary: "Create a notification channel; a webhook's signing secret is in this answer only",
        body: CreateChannelBody,
        response: {
          201: SingleEnvelope(CreatedNotificationChannel),
          ...errorResponses(AuthErrors.user_required, RequestErrors.validation, E.too_many_channels),
        },
      },
    },
    async (request, reply) =>
      created(
        request,
        reply,
        '/v1/notification-channels',
        await notifications.createChannel(me(request), request.body),
      ),
  );

  app.patch(
    '/v1/notification-channels/:id',
    {
      config: write,
      schema: {
        tags,
        summary: 'Change a notification channel (config replaces the old; secrets left out are kept)',
        description: OWN,
        params: IdParams,
        body: UpdateChannelBody,
        response: {
          200: SingleEnvelope(NotificationChannel),
          ...errorResponses(AuthErrors.user_required, RequestErrors.validation, E.channel_not_found),
        },
      },
    },
    async (request) => single(request, await notifications.updateChannel(me(request), request.params.id, request.body)),
  );

  app.delete(
    '/v1/notification-channels/:id',
    {
      config: write,
      schema: {
        tags,
        summary: 'Delete a notification channel and its deliveries',
        description: OWN,
        params: IdParams,
        response: { 204: Type.Null(), ...errorResponses(AuthErrors.user_required, E.channel_not_found) },
      },
    },
    async (request, reply) => {
      await notifications.deleteChannel(me(request), request.params.id);
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/v1/notification-channels/:id/test',
    {
      config: write,
      schema: {
        tags,
        summary: 'Send a test notification now and answer what the far side said',
        description: `${OWN} A failure of the far side is answered 200 with ok false and its detail.`,
        params: IdParams,
        response: {
          200: SingleEnvelope(SendResultSchema),
          ...errorResponses(AuthErrors.user_required, E.channel_not_found),
        },
      },
    },
    async (request) =>
      single(request, await notifications.testChannel(me(request), request.params.id, `test_${randomUUID()}`)),
  );

  app.get(
    '/v1/notification-rules',
    {
      config: read,
      schema: {
        tags,
        summary: 'Your notification rules, oldest first',
        querystring: PageQuery(50),
        response: { 200: PageEnvelope(NotificationRule), ...errorResponses(AuthErrors.user_required) },
      },
    },
    async (request) => {
      const { rows, total } = await notifications.rules(me(request), request.query.limit, offsetOf(request.query));
      return paginated(request, rows, total, request.query);
    },
  );

  app.post(
    '/v1/notification-rules',
    {
      config: write,
      schema: {
        tags,
        summary: 'Create a notification rule: these event types of these devices and geofences go to these channels',
        description:
          'Devices and geofences must be ones you may see and channels your own (400 naming the field otherwise).',
        body: CreateRuleBody,
        response: {
          201: SingleEnvelope(NotificationRule),
          ...errorResponses(AuthErrors.user_required, RequestErrors.validation, E.too_many_rules),
        },
      },
    },
    async (request, reply) =>
      created(request, reply, '/v1/notification-rules', await notifications.createRule(me(request), request.body)),
  );

  app.get(
    '/v1/notification-rules/:id',
    {
      config: read,
      schema: {
        tags,
        summary: 'One of your notification rules',
        description: OWN,
        params: IdParams,
        response: {
          200: SingleEnvelope(NotificationRule),
          ...errorResponses(AuthErrors.user_required, E.rule_not_found),
        },
      },
    },
    async (request) => single(request, await notifications.rule(me(request), request.params.id)),
  );

  app.patch(
    '/v1/notification-rules/:id',
    {
      config: write,
      schema: {
        tags,
        summary: 'Change a notification rule',
        description: OWN,
        params: IdParams,
        body: UpdateRuleBody,
        response: {
          200: SingleEnvelope(NotificationRule),
          ...errorResponses(AuthErrors.user_required, RequestErrors.validation, E.rule_not_found),
        },
      },
    },
    async (request) => single(request, await notifications.updateRule(me(request), request.params.id, request.body)),
  );

  app.delete(
    '/v1/notification-rules/:id',
    {
      config: write,
      schema: {
        tags,
        summary: 'Delete a notification rule',
        description: OWN,
        params: IdParams,
        response: { 204: Type.Null(), ...errorResponses(AuthErrors.user_required, E.rule_not_found) },
      },
    },
    async (request, reply) => {
      await notifications.deleteRule(me(request), request.params.id);
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/v1/notification-deliveries',
    {
      config: read,
      schema: {
        tags,
        summary: 'Deliveries to your channels, newest first: status, attempts, what the far side last said',
        querystring: DeliveriesQuery,
        response: { 200: PageEnvelope(NotificationDelivery), ...errorResponses(AuthErrors.user_required) },
      },
    },
    async (request) => {
      const { page, limit, ...filter } = request.query;
      const { rows, total } = await outbox.page(me(request), filter, limit, (page - 1) * limit);
      return paginated(request, rows, total, { page, limit });
    },
  );
}
