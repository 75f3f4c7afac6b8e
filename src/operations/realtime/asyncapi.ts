import { VERSION } from '../../version.js';
import { CloseCodes, messageSchemas } from './messages.js';

/** How a WebSocket client may authenticate (AsyncAPI 3.0 security schemes). */
const securitySchemes = {
  bearer: {
    type: 'http',
    scheme: 'bearer',
    description:
      '`Authorization: Bearer` on the upgrade request: a session token, an API key or an OAuth access token.',
  },
  ticket: {
    type: 'httpApiKey',
    in: 'header',
    name: 'Sec-WebSocket-Protocol',
    description:
      'For browsers, which cannot set headers on a WebSocket: the subprotocol pair `service-ticket`, `<ticket>`, ' +
      'the ticket single-use and from POST /v1/ws/ticket. The server selects `service-ticket`.',
  },
  anonymous: {
    type: 'httpApiKey',
    in: 'header',
    name: 'Sec-WebSocket-Protocol',
    description: 'No credential at all: public channels only (`vessels`, `public*`).',
  },
};

/**
 * The WebSocket protocol as an AsyncAPI 3.0 document, generated from the message schemas the server
 * validates and sends with. Described from the server's side: it receives client messages and sends the rest.
 */
export function asyncApiDocument(host: string, secure: boolean) {
  const channelMessages: Record<string, { $ref: string }> = {};
  const messages: Record<string, object> = {};
  const operations: Record<string, object> = {};
  for (const [direction, schemas] of Object.entries(messageSchemas)) {
    for (const [name, payload] of Object.entries(schemas)) {
      const key = direction === 'client' ? name : `server${name[0]!.toUpperCase()}${name.slice(1)}`;
      messages[key] = {
        name,
        title: name,
        summary: (payload as { description?: string }).description,
        contentType: 'application/json',
        payload,
      };
      channelMessages[key] = { $ref: `#/components/messages/${key}` };
      operations[direction === 'client' ? `receive${name}` : `send${name[0]!.toUpperCase()}${name.slice(1)}`] = {
        action: direction === 'client' ? 'receive' : 'send',
        channel: { $ref: '#/channels/socket' },
        messages: [{ $ref: `#/channels/socket/messages/${key}` }],
      };
    }
  }
  return {
    asyncapi: '3.0.0',
    info: {
      title: 'Waygate realtime API',
      version: VERSION,
      description:
        'One WebSocket at /v1/ws carries every channel: `gps` (new points; needs gps:read), `vessels` (device ' +
        'positions; anyone) and `public*` (system broadcasts; anyone). Authenticate with the subprotocol pair ' +
        '`service-ticket`, `<ticket>` (a single-use ticket from POST /v1/ws/ticket, for browsers), with ' +
        '`Authorization: Bearer`, or not at all (anonymous). Close codes: ' +
        Object.entries(CloseCodes)
          .map(([name, code]) => `${code} ${name}`)
          .join(', ') +
        '.',
    },
    servers: {
      waygate: {
        host,
        protocol: secure ? 'wss' : 'ws',
        pathname: '/v1/ws',
        // Any one of these: a tool reads them as alternatives, as the server accepts them.
        security: [
          { $ref: '#/components/securitySchemes/bearer' },
          { $ref: '#/components/securitySchemes/ticket' },
          { $ref: '#/components/securitySchemes/anonymous' },
        ],
      },
    },
    defaultContentType: 'application/json',
    channels: { socket: { address: '/v1/ws', messages: channelMessages } },
    operations,
    components: { messages, securitySchemes },
  };
}
