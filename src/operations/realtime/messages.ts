import { Type, type Static, type TSchema } from 'typebox';
import { GpsPoint } from '../../tracking/gps/schemas.js';
import { Event } from '../../tracking/events/schemas.js';
import { BotChannel, BotGuild, BotMember, BotRole } from '../community/schemas.js';

/**
 * Every message of the WebSocket protocol at /v1/ws, both directions, in one place: the server
 * validates what clients send against these schemas, types what it sends by them, and the AsyncAPI
 * document (/v1/asyncapi.json) is generated from them. Frames are JSON text.
 *
 * `type` names follow the spec where it names them (`Subscribe`, `forceLogout`, `appLogout`).
 */

const Channel = Type.String({
  minLength: 1,
  maxLength: 100,
  pattern: '^[A-Za-z0-9_.:-]+$',
  description:
    '`gps` (needs gps:read), `events` (events:read, or events:read_own for the devices one sees), `vessels` ' +
    '(anyone), or any name starting with `public` (anyone)',
});
/** Echoed in the answer, so a client can match acknowledgements and errors to its requests. */
const RequestId = Type.Optional(Type.String({ maxLength: 100, description: 'Echoed in the acknowledgement or error' }));

export const ClientMessages = {
  Subscribe: Type.Object(
    { type: Type.Literal('Subscribe'), channel: Channel, id: RequestId },
    { additionalProperties: false, description: 'Start receiving a channel. Answered by Subscribed or Error.' },
  ),
  Unsubscribe: Type.Object(
    { type: Type.Literal('Unsubscribe'), channel: Channel, id: RequestId },
    { additionalProperties: false, description: 'Stop receiving a channel. Answered by Unsubscribed.' },
  ),
  Ping: Type.Object(
    { type: Type.Literal('Ping'), id: RequestId },
    {
      additionalProperties: false,
      description: 'Application-level keep-alive for clients that cannot send ping frames. Answered by Pong.',
    },
  ),
  Publish: Type.Object(
    {
      type: Type.Literal('Publish'),
      channel: Channel,
      data: Type.Unknown({ description: 'Any JSON value, delivered as is' }),
      id: RequestId,
    },
    {
      additionalProperties: false,
      description: 'System key only: broadcast on a public* channel to every node. Answered by Published.',
    },
  ),
  Identify: Type.Object(
    { type: Type.Literal('Identify'), client: Type.Literal('community_bot'), id: RequestId },
    {
      additionalProperties: false,
      description:
        'System key only: this connection is the community bot, which answers SyncRequest. Answered by Identified.',
    },
  ),
  SyncData: Type.Object(
    {
      type: Type.Literal('SyncData'),
      requestId: Type.String({ format: 'uuid', description: 'The SyncRequest this answers' }),
      guilds: Type.Optional(Type.Array(BotGuild, { maxItems: 200 })),
      channels: Type.Optional(Type.Array(BotChannel, { maxItems: 2000 })),
      roles: Type.Optional(Type.Array(BotRole, { maxItems: 2000 })),
      members: Type.Optional(Type.Array(BotMember, { maxItems: 1000 })),
      done: Type.Boolean({ description: 'true on the last batch' }),
    },
    {
      additionalProperties: false,
      description:
        'Bot only: one batch of a sync answer (guilds, channels and roles for scope guilds; members for scope members). Like every message at most 64 KiB: about 150 members.',
    },
  ),
  SyncError: Type.Object(
    {
      type: Type.Literal('SyncError'),
      requestId: Type.String({ format: 'uuid' }),
      error: Type.String({ minLength: 1, maxLength: 500 }),
    },
    { additionalProperties: false, description: 'Bot only: the sync cannot be done; nothing of it is written.' },
  ),
} as const;

type ClientMessageName = keyof typeof ClientMessages;
export type ClientMessage = { [K in ClientMessageName]: Static<(typeof ClientMessages)[K]> }[ClientMessageName];

/** The vessel view of a point: where a device is and how it moves, nothing about trips or accuracy. */
export const VesselPosition = Type.Object({
  device_id: Type.String({ format: 'uuid' }),
  latitude: Type.Number(),
  longitude: Type.Number(),
  heading: Type.Union([Type.Number(), Type.Null()]),
  speed_knots: Type.Union([Type.Number(), Type.Null()], { description: 'null: the device did not know its speed' }),
  timestamp: Type.String({ format: 'date-time' }),
});

export const ServerMessages = {
  Welcome: Type.Object(
    {
      type: Type.Literal('Welcome'),
      userId: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], {
        description: 'null: anonymous or the system key',
      }),
      heartbeatSecs: Type.Integer({
        description: 'The server pings this often; a peer that misses one answer is dropped',
      }),
      maxSubscriptions: Type.Integer(),
    },
    { description: 'First message on every connection.' },
  ),
  Subscribed: Type.Object({ type: Type.Literal('Subscribed'), channel: Channel, id: RequestId }),
  Unsubscribed: Type.Object({ type: Type.Literal('Unsubscribed'), channel: Channel, id: RequestId }),
  Published: Type.Object({ type: Type.Literal('Published'), channel: Channel, id: RequestId }),
  Pong: Type.Object({ type: Type.Literal('Pong'), id: RequestId }),
  Error: Type.Object(
    {
      type: Type.Literal('Error'),
      code: Type.String({ description: 'Stable code, e.g. ws.channel_forbidden' }),
      reason: Type.String(),
      channel: Type.Optional(Channel),
      id: RequestId,
    },
    { description: 'A message was refused; the connection stays open.' },
  ),
  GpsPoint: Type.Object(
    { type: Type.Literal('GpsPoint'), channel: Type.Literal('gps'), data: GpsPoint },
    { description: 'A point was recorded (the same shape as GET /v1/gps/{id} returns).' },
  ),
  Event: Type.Object(
    { type: Type.Literal('Event'), channel: Type.Literal('events'), data: Event },
    { description: 'An event was stored (geofence enter, exit, dwell, ...; the shape of GET /v1/events/{id}).' },
  ),
  VesselPosition: Type.Object(
    { type: Type.Literal('VesselPosition'), channel: Type.Literal('vessels'), data: VesselPosition },
    { description: 'A device reported a new position.' },
  ),
  PublicMessage: Type.Object(
    { type: Type.Literal('PublicMessage'), channel: Channel, data: Type.Unknown() },
    { description: 'Broadcast by the system on a public* channel.' },
  ),
  Identified: Type.Object({ type: Type.Literal('Identified'), client: Type.Literal('community_bot'), id: RequestId }),
  SyncRequest: Type.Object(
    {
      type: Type.Literal('SyncRequest'),
      requestId: Type.String({ format: 'uuid' }),
      scope: Type.Union([Type.Literal('guilds'), Type.Literal('members')]),
      guildId: Type.Union([Type.String(), Type.Null()], {
        description: 'The guild snowflake; null: every guild (scope guilds only)',
      }),
      deadline: Type.String({
        format: 'date-time',
        description: 'Batches arriving after this are ignored and the sync fails',
      }),
    },
    {
      description:
        'To the community bot: report guilds (with channels and roles) or the members of one guild, in SyncData batches.',
    },
  ),
  forceLogout: Type.Object(
    {
      type: Type.Literal('forceLogout'),
      reason: Type.String({ description: 'e.g. sso_logout, banned, account_deleted' }),
    },
    {
      description:
        'The user was signed out everywhere (logout-everywhere, ban, deletion); the server closes the connection after it.',
    },
  ),
  appLogout: Type.Object(
    { type: Type.Literal('appLogout'), clientId: Type.String() },
    {
      description:
        "The user signed out of this OAuth client (logout-app). Connections opened with that client's tokens close (4003) as the tokens are revoked; others stay.",
    },
  ),
} as const;

type ServerMessageName = keyof typeof ServerMessages;
export type ServerMessage = { [K in ServerMessageName]: Static<(typeof ServerMessages)[K]> }[ServerMessageName];

/**
 * Close codes the server sends (4000-4999 is the range RFC 6455 leaves to applications). A client that
 * does not read fast enough is cut without a close frame (it sees 1006): the frame would queue behind
 * what it does not read.
 */
export const CloseCodes = {
  /** forceLogout was sent (logout-everywhere, ban, deletion). */
  signedOut: 4001,
  /** The credential the connection was opened with was revoked or expired. */
  credentialRevoked: 4003,
  /** More than 100 messages in 10 s. */
  tooManyMessages: 1008,
  /** A message over 64 KiB. */
  messageTooBig: 1009,
  /** The server is shutting down; reconnect elsewhere. */
  goingAway: 1001,
} as const;

export const messageSchemas: Record<'client' | 'server', Record<string, TSchema>> = {
  client: ClientMessages,
  server: ServerMessages,
};
