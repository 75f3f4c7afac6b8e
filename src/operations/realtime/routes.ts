import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { bearerTokenHash, callerOf, requireAuthenticated } from '../../platform/auth/hooks.js';
import { errorResponses, publicBaseUrl } from '../../platform/http/envelopes.js';
import { AuthErrors } from '../../platform/http/errors.js';
import { asyncApiDocument } from './asyncapi.js';
import { RealtimeErrors } from './errors.js';
import type { Peer } from './hub.js';
import type { RealtimeService } from './service.js';

const tags = ['Realtime'];
const TicketResponse = Type.Object({
  ticket: Type.String({ description: 'Single use; send it as the subprotocol pair `service-ticket`, `<ticket>`' }),
  expiresIn: Type.Integer({ description: 'Seconds the ticket stays valid' }),
});

/** Sec-WebSocket-Protocol entries, in order (several headers are joined by commas). */
function protocolsOf(request: FastifyRequest): string[] {
  const header = request.headers['sec-websocket-protocol'];
  return header
    ? header
        .split(',')
        .map((entry) => entry.trim())
        .filter(Boolean)
    : [];
}

export async function realtimeRoutes(
  fastify: FastifyInstance,
  { realtime, documented }: { realtime: RealtimeService; documented: boolean },
): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const peers = new WeakMap<FastifyRequest, Peer>();

  app.post(
    '/v1/ws/ticket',
    {
      config: { auth: requireAuthenticated({ oauthTokens: true }) },
      schema: {
        tags,
        summary: 'Mint a WebSocket ticket',
        description:
          'For browsers, which cannot set headers on a WebSocket: a short-lived, single-use ticket standing for your ' +
          'session or OAuth access token. API keys connect with Authorization: Bearer instead (403 here).',
        response: { 200: TicketResponse, ...errorResponses(RealtimeErrors.user_context_required) },
      },
    },
    async (request) => realtime.mintTicket(callerOf(request), bearerTokenHash(request)!),
  );

  app.route({
    method: 'GET',
    url: '/v1/ws',
    schema: {
      tags,
      summary: 'Open the WebSocket',
      description:
        'Upgrades to a WebSocket (101). Authenticated by the first applicable of: the subprotocol pair ' +
        '`service-ticket`, `<ticket>` (the server selects `service-ticket`); `Authorization: Bearer` (a system key ' +
        'may add `?userId=` to act for that user); nothing (anonymous: `public*` channels and `vessels`). The ' +
        'messages are described in the AsyncAPI document at /v1/asyncapi.json.',
      querystring: Type.Object({
        userId: Type.Optional(Type.String({ maxLength: 36, description: 'System key only: the user to act for' })),
      }),
      response: errorResponses(
        AuthErrors.unauthorized,
        RealtimeErrors.ticket_invalid,
        RealtimeErrors.ticket_missing,
        RealtimeErrors.relay_requires_system_key,
        RealtimeErrors.user_not_found,
        RealtimeErrors.upgrade_required,
        RealtimeErrors.node_full,
        RealtimeErrors.too_many_from_address,
      ),
    },
    // Before the upgrade: a refused handshake is an ordinary HTTP error response.
    preHandler: async (request) => {
      if (!request.ws) return;
      const hash = request.headers.authorization === undefined ? null : bearerTokenHash(request);
      const peer = await realtime.authenticate({
        protocols: protocolsOf(request),
        authorization: request.headers.authorization === undefined ? null : { caller: request.caller, hash },
        relayUserId: (request.query as { userId?: string }).userId,
      });
      realtime.admit(peer, request.ip);
      peers.set(request, peer);
    },
    handler: async () => {
      throw RealtimeErrors.upgrade_required();
    },
    wsHandler: (socket, request) => void realtime.open(socket, peers.get(request)!, request.ip),
  });

  if (documented) {
    app.get('/v1/asyncapi.json', { schema: { hide: true } }, async (request) => {
      const base = new URL(publicBaseUrl(request));
      return asyncApiDocument(base.host, base.protocol === 'https:');
    });
  }
}
