import type { FastifyBaseLogger } from 'fastify';
import type { WebSocket } from 'ws';
import { grants, hasPermission, type Caller } from '../../platform/auth/caller.js';
import type { CredentialResolver } from '../../platform/auth/credentials.js';
import type { Clock } from '../../platform/clock.js';
import type { RecordedEvent, RecordedGpsPoint } from '../../platform/events.js';
import type { KeyValueStore } from '../../platform/kv/index.js';
import { singleUseTickets } from '../../platform/kv/tickets.js';
import { AuthErrors } from '../../platform/http/errors.js';
import { isUuid } from '../../platform/http/schemas.js';
import { serializerOf } from '../../platform/http/serialization.js';
import { GpsPoint } from '../../tracking/gps/schemas.js';
import { seesNewPoint, type Grant } from '../../tracking/sharing/index.js';
import { RealtimeErrors } from './errors.js';
import { toggledSubscription } from './toggled-subscription.js';
import { Hub, type BotMessage, type Connection, type Peer } from './hub.js';
import { CloseCodes, type ServerMessage } from './messages.js';

export { HEARTBEAT_MS, MAX_BUFFERED_BYTES, MAX_SUBSCRIPTIONS, type BotMessage } from './hub.js';

/** A request to the community bot (see messages.ts). */
export type BotSyncRequest = Extract<ServerMessage, { type: 'SyncRequest' }>;

/** The community bot as this node sees it: the community module's way to ask it for data. */
export interface BotLink {
  /** Whether the bot is connected to this node. */
  connected(): boolean;
  /** Sends to the bot on this node; false when it is not connected here. */
  send(request: BotSyncRequest): boolean;
  /**
   * Where the bot's sync answers go (one receiver, registered at start-up). A returned promise holds
   * back the bot's next batches until it settles.
   */
  onMessage(handler: (message: BotMessage) => Promise<void> | void): void;
}

/** A ticket is good for this long after it is minted, and for one upgrade. */
export const TICKET_TTL_SECS = 30;
const TICKET_PREFIX = 'wst_';
/**
 * Pub/sub channels between nodes: new points, messages for one user's connections, public broadcasts.
 * A point travels as '1' or '0' (its device is public or not) and its REST JSON, several points of a batch
 * as lines of one message; v3: nodes of the previous version, during a rolling deploy, read none of these
 * (nor these nodes theirs, which hold one point each). A node subscribes to POINTS only while one of its
 * connections listens on gps or vessels, so its subscriber count tells a publisher whether anyone does.
 */
const POINTS = 'ws:points:v3';
/**
 * Up to this many points are published without asking whether any node listens (building their message costs
 * less than asking); a larger batch (10,000 points are ~100 ms of serialising) asks first.
 */
const ASK_ABOVE_POINTS = 64;
/** A point's REST JSON (the GpsPoint schema), compiled: a batch of 10,000 points is one message of 10,000 of these. */
const pointJson = serializerOf<RecordedGpsPoint>(GpsPoint);
/** The channels new points are delivered on. */
const POINT_CHANNELS = ['gps', 'vessels'];
/** New events (a JSON array of rows), for the events channel; a node subscribes while one of its connections listens. */
const EVENTS = 'ws:events:v1';
const USERS = 'ws:users';
const PUBLIC = 'ws:public';
/** Re-checking credentials after an invalidation: this many lookups at a time. */
const RECHECK_CONCURRENCY = 20;

/** What a ticket stands for: the credential that minted it (by hash) and its user. */
interface TicketGrant {
  hash: string;
  kind: Caller['kind'];
  userId: string;
}

/** Messages that sign a user's open apps out (sent by the sessions module, on every node). */
export type SignOutMessage = Extract<ServerMessage, { type: 'forceLogout' | 'appLogout' }>;

/** How the upgrade request was authenticated (see `authenticate`). */
export interface UpgradeCredentials {
  /** Sec-WebSocket-Protocol entries, in order. */
  protocols: string[];
  /** Whether an Authorization header was sent, and what the auth hook resolved it to. */
  authorization: { caller: Caller | null; hash: string | null } | null;
  /** ?userId= (system key relaying a user). */
  relayUserId?: string;
}

interface Deps {
  kv: KeyValueStore;
  credentials: Pick<CredentialResolver, 'resolveHash' | 'onInvalidated'>;
  clock: Clock;
  log: FastifyBaseLogger;
  /** The access of an active (not deleted, not banned) user, or null: for a system key relaying one. */
  accessOfActiveUser: (userId: string) => Promise<{ permissions: string[]; isSuperAdmin: boolean } | null>;
  /** The grants a self-service user's live points are judged by; null for a holder of gps:read (or nobody). */
  liveGrantsOf: (caller: Caller) => Promise<readonly Grant[] | null>;
}

/**
 * Realtime delivery over /v1/ws: tickets for browsers, who may connect and subscribe to what, and
 * fan-out of new points and sign-outs to every node through the key-value store's pub/sub (Redis
 * with REDIS_URL, in-process otherwise). Each node serialises a message once and writes it to its own sockets.
 */
export function createRealtimeService(deps: Deps) {
  const { kv, clock, log } = deps;
  const tickets = singleUseTickets<TicketGrant>(kv, {
    prefix: TICKET_PREFIX,
    namespace: 'ws:ticket',
    ttlSecs: TICKET_TTL_SECS,
  });
  let onBotMessage: (message: BotMessage) => Promise<void> | void = () => {};
  const hub: Hub = new Hub(
    {
      publish: async (channel, data) => void (await kv.publish(PUBLIC, JSON.stringify({ channel, data }))),
      fromBot: (message) => onBotMessage(message),
      channelChanged: (channel): Promise<void> | undefined =>
        POINT_CHANNELS.includes(channel)
          ? pointsFeed.want(POINT_CHANNELS.some((c) => hub.hasSubscribers(c)))
          : channel === 'events'
            ? eventsFeed.want(hub.hasSubscribers('events'))
            : undefined,
    },
    log,
    () => clock.nowMs(),
  );
  const pointsFeed = toggledSubscription(kv, POINTS, guarded(onPoints), log);
  const eventsFeed = toggledSubscription(kv, EVENTS, guarded(onEvents), log);
  /** Points are published in the order they were recorded, whether or not a batch first asked who listens. */
  let pointsPublished: Promise<void> = Promise.resolve();
  const unsubscribers: (() => Promise<void> | void)[] = [];

  async function peerOf(caller: Caller, credential: Peer['credential']): Promise<Peer> {
    // The system key itself reads no channel a user needs a permission for (REST refuses it /v1/gps
    // too); it publishes, relays users and identifies the bot.
    const may = caller.isSystem ? () => false : (permission: string) => hasPermission(caller, permission);
    return {
      userId: caller.userId,
      isSystem: caller.isSystem,
      may,
      credential,
      expiresAt: caller.expiresAt,
      readsAllPoints: may('gps:read'),
      liveGrants: caller.isSystem ? null : await deps.liveGrantsOf(caller),
    };
  }

  /** A user the system key acts for: their roles' permissions, re-read on every recheck. */
  function relayedPeerOf(
    userId: string,
    access: { permissions: string[]; isSuperAdmin: boolean },
    systemKeyHash: string,
  ): Peer {
    return {
      userId,
      isSystem: false,
      may: (permission) => access.isSuperAdmin || grants(access.permissions, permission),
      readsAllPoints: access.isSuperAdmin || grants(access.permissions, 'gps:read'),
      // The key is what can be revoked; a ban or deletion of the user signs them out (forceLogout).
      credential: { hash: systemKeyHash, kind: 'api_key' },
      expiresAt: null,
      relayed: true,
    };
  }

  async function peerFromTicket(ticket: string | undefined): Promise<Peer> {
    if (!ticket) throw RealtimeErrors.ticket_missing();
    // Of two upgrades racing with one ticket, only one gets through, on any node.
    const grant = await tickets.redeem(ticket);
    if (!grant) throw RealtimeErrors.ticket_invalid();
    const caller = await deps.credentials.resolveHash(grant.hash, grant.kind);
    // The credential that minted the ticket may have ended since.
    if (!caller || caller.userId !== grant.userId) throw RealtimeErrors.ticket_invalid();
    return peerOf(caller, { hash: grant.hash, kind: grant.kind });
  }

  async function relayedPeer(system: Caller, hash: string, userId: string): Promise<Peer> {
    if (!system.isSystem) throw RealtimeErrors.relay_requires_system_key();
    const id = userId.toLowerCase();
    const access = isUuid(id) ? await deps.accessOfActiveUser(id) : null;
    if (!access) throw RealtimeErrors.user_not_found();
    return relayedPeerOf(id, access, hash);
  }

  /** Re-reads the credentials of these connections (each credential once): revoked ones are closed, changed access applied. */
  async function recheck(connections: Connection[]): Promise<void> {
    const byHash = new Map<string, Connection[]>();
    for (const connection of connections) {
      const { credential } = connection.peer;
      if (!credential) continue;
      const group = byHash.get(credential.hash);
      if (group) group.push(connection);
      else byHash.set(credential.hash, [connection]);
    }
    const pending = [...byHash];
    let next = 0;
    const worker = async () => {
      while (next < pending.length) await recheckCredential(...pending[next++]!);
    };
    await Promise.all(Array.from({ length: RECHECK_CONCURRENCY }, worker));
  }

  async function recheckCredential(hash: string, connections: Connection[]): Promise<void> {
    const kind = connections[0]!.peer.credential!.kind;
    let caller: Caller | null;
    try {
      caller = await deps.credentials.resolveHash(hash, kind);
    } catch (err) {
      // Not knowing is not a revocation: the next invalidation or heartbeat asks again.
      log.warn({ err }, 'could not re-check the credential of a WebSocket connection');
      return;
    }
    for (const connection of connections) {
      if (!caller) connection.socket.close(CloseCodes.credentialRevoked, 'credential revoked');
      else if (connection.peer.relayed) await recheckRelayed(connection, hash);
      else hub.updatePeer(connection, await peerOf(caller, connection.peer.credential));
    }
  }

  async function recheckRelayed(connection: Connection, systemKeyHash: string): Promise<void> {
    const userId = connection.peer.userId!;
    const access = await deps.accessOfActiveUser(userId).catch(() => undefined);
    if (access === undefined) return;
    if (!access) connection.socket.close(CloseCodes.credentialRevoked, 'user no longer active');
    else hub.updatePeer(connection, relayedPeerOf(userId, access, systemKeyHash));
  }

  /**
   * A message of eventsRecorded: to each subscriber of events who may see the event's device (events:read: every
   * device; events:read_own: the devices of their unexpired grants, at any level) and, for a user's geofence, may
   * read that geofence (its owner, or one they share a device with at level full). Its owner is not sent.
   */
  function onEvents(message: string): void {
    if (!hub.hasSubscribers('events')) return;
    const now = clock.nowMs();
    const unexpired = (grant: Grant) => grant.expires_at === null || grant.expires_at > now;
    for (const recorded of JSON.parse(message) as RecordedEvent[]) {
      const { geofence_owner_id: fenceOwner, ...event } = recorded;
      const readsFence = (peer: Peer) =>
        fenceOwner === null ||
        peer.userId === fenceOwner ||
        (peer.liveGrants?.some(
          (grant) => grant.shared_by === fenceOwner && grant.level === 'full' && unexpired(grant),
        ) ??
          false);
      const mayRead = (peer: Peer) =>
        peer.may('events:read') ||
        (peer.may('events:read_own') &&
          readsFence(peer) &&
          (peer.liveGrants?.some((grant) => grant.device_id === event.device_id && unexpired(grant)) ?? false));
      hub.deliver('events', Buffer.from(JSON.stringify({ type: 'Event', channel: 'events', data: event })), mayRead);
    }
  }

  /** A message of pointsRecorded: a line per point (JSON text never holds a raw line break). */
  function onPoints(message: string): void {
    if (!POINT_CHANNELS.some((channel) => hub.hasSubscribers(channel))) return;
    for (const line of message.split('\n')) onPoint(line);
  }

  function onPoint(message: string): void {
    const devicePublic = message[0] === '1';
    const raw = message.slice(1);
    // Parsed only when a self-service subscriber (or the vessels channel) needs to know whose point it is.
    let parsed: RecordedGpsPoint | undefined;
    const pointOf = () => (parsed ??= JSON.parse(raw) as RecordedGpsPoint);
    const now = clock.nowMs();
    const mayRead = (peer: Peer) => {
      if (peer.readsAllPoints) return true;
      if (!peer.liveGrants) return false;
      const point = pointOf();
      const at = new Date(point.timestamp).getTime();
      return typeof point.device_id === 'string' && seesNewPoint(peer.liveGrants, point.device_id, at, now);
    };
    if (hub.hasSubscribers('gps'))
      hub.deliver('gps', Buffer.from(`{"type":"GpsPoint","channel":"gps","data":${raw}}`), mayRead);
    if (!hub.hasSubscribers('vessels')) return;
    const point = pointOf();
    if (!point.device_id) return;
    const vessel = {
      device_id: point.device_id,
      latitude: point.latitude,
      longitude: point.longitude,
      heading: point.heading,
      speed_knots: point.speed_knots,
      timestamp: point.timestamp,
    };
    // A public device's position goes to every subscriber; another's to those who may read GPS data
    // (the gps channel shows them every point anyway), never to an anonymous one.
    const frame = Buffer.from(JSON.stringify({ type: 'VesselPosition', channel: 'vessels', data: vessel }));
    hub.deliver('vessels', frame, devicePublic ? undefined : mayRead);
  }

  function onUserMessage(raw: string): void {
    const { userId, message, accessChanged } = JSON.parse(raw) as {
      userId: string;
      message: SignOutMessage;
      accessChanged?: true;
    };
    if (accessChanged) {
      // A relayed user's connection holds the system key, not one of the user's credentials: the
      // invalidation of those does not reach it, so their access is read again here.
      for (const connection of hub.ofUser(userId))
        if (connection.peer.relayed) void recheckRelayed(connection, connection.peer.credential!.hash);
      return;
    }
    // forceLogout ends the user's connections; appLogout only tells them (the app's own token
    // connections close as its tokens are revoked, the user's other apps stay connected).
    hub.signOut(userId, message, message.type === 'forceLogout');
  }

  function onPublic(raw: string): void {
    const { channel, data } = JSON.parse(raw) as { channel: string; data: unknown };
    hub.deliver(channel, Buffer.from(JSON.stringify({ type: 'PublicMessage', channel, data })));
  }

  /** A malformed pub/sub message (another version, a bug) is logged and skipped, never thrown into the store's client. */
  function guarded(handle: (raw: string) => void) {
    return (raw: string) => {
      try {
        handle(raw);
      } catch (err) {
        log.warn({ err }, 'ignoring a malformed realtime message');
      }
    };
  }

  const bot: BotLink = {
    connected: () => hub.bot !== undefined,
    send(request) {
      const connection = hub.bot;
      if (!connection) return false;
      hub.send(connection, request);
      return true;
    },
    onMessage(handler) {
      onBotMessage = handler;
    },
  };

  return {
    stats: () => hub.stats(),
    bot,

    async start(): Promise<void> {
      unsubscribers.push(
        await kv.subscribe(USERS, guarded(onUserMessage)),
        await kv.subscribe(PUBLIC, guarded(onPublic)),
        deps.credentials.onInvalidated((hashes) => void recheck(hub.withCredentials(hashes))),
      );
      hub.start((connections) => void recheck(connections));
    },

    async stop(): Promise<void> {
      hub.stop();
      await Promise.all([
        ...unsubscribers.splice(0).map((unsubscribe) => unsubscribe()),
        pointsFeed.want(false),
        eventsFeed.want(false),
      ]);
    },

    /** POST /v1/ws/ticket: a single-use ticket standing for the caller's own credential. */
    async mintTicket(caller: Caller, credentialHash: string): Promise<{ ticket: string; expiresIn: number }> {
      if (!caller.userId || (caller.kind !== 'session' && caller.kind !== 'oauth_token'))
        throw RealtimeErrors.user_context_required();
      const ticket = await tickets.issue({ hash: credentialHash, kind: caller.kind, userId: caller.userId });
      return { ticket, expiresIn: TICKET_TTL_SECS };
    },

    /**
     * Who opens the connection, by the first applicable of: the service-ticket subprotocol, a bearer
     * credential (a system key may relay ?userId=), none (anonymous: public* channels and vessels).
     */
    async authenticate(upgrade: UpgradeCredentials): Promise<Peer> {
      const ticketAt = upgrade.protocols.indexOf('service-ticket');
      if (ticketAt >= 0) return peerFromTicket(upgrade.protocols[ticketAt + 1]);
      const { authorization } = upgrade;
      if (authorization) {
        const { caller, hash } = authorization;
        // A credential that was sent but does not resolve is refused, not silently treated as anonymous.
        if (!caller || !hash) throw AuthErrors.unauthorized();
        if (upgrade.relayUserId !== undefined) return relayedPeer(caller, hash, upgrade.relayUserId);
        return peerOf(caller, { hash, kind: caller.kind });
      }
      if (upgrade.relayUserId !== undefined) throw RealtimeErrors.relay_requires_system_key();
      return { userId: null, isSystem: false, may: () => false, credential: null, expiresAt: null };
    },

    /** Refuses a connection when the node is full, or an address already holds its share of anonymous ones. */
    admit(peer: Peer, address: string): void {
      const refusal = hub.refusal(peer, address);
      if (refusal === 'node_full') throw RealtimeErrors.node_full();
      if (refusal === 'address_full') throw RealtimeErrors.too_many_from_address();
    },

    /**
     * Enters an upgraded connection into the hub. Its credential is read again on entry: one revoked between
     * the handshake's authentication and now was invalidated while no connection held it, and would
     * otherwise be noticed only at the next periodic recheck (a cache hit when nothing changed).
     */
    open(socket: WebSocket, peer: Peer, address: string): Promise<void> {
      const connection = hub.add(socket, peer, address);
      return peer.credential ? recheck([connection]) : Promise.resolve();
    },

    /** Tells the user's open connections, on every node, to sign out (after forceLogout they are closed). */
    async signOut(userId: string, message: SignOutMessage): Promise<void> {
      await kv.publish(USERS, JSON.stringify({ userId, message }));
    },

    /** What these users reach changed (told on every node): their open connections judge new points anew. */
    grantsChanged(userIds: string[]): void {
      const connections = userIds.flatMap((userId) => hub.ofUser(userId)).filter((c) => !c.peer.relayed);
      if (connections.length > 0)
        recheck(connections).catch((err: unknown) => log.warn({ err }, 'could not re-read what subscribers may see'));
    },

    /** The user's roles changed: connections the system key relays for them, on every node, get their new access. */
    async accessChanged(userId: string): Promise<void> {
      await kv.publish(USERS, JSON.stringify({ userId, accessChanged: true }));
    },

    /** New events (after their commit, on the node that stored them), for the events channel on every node. */
    async eventsRecorded(events: readonly RecordedEvent[]): Promise<void> {
      if (events.length === 0) return;
      await kv.publish(EVENTS, JSON.stringify(events)).catch((err: unknown) => {
        log.warn({ err }, 'could not publish new events to WebSocket subscribers');
      });
    },

    /**
     * New points (in their REST shape), for the gps channel (and vessels, when they have a device) on every
     * node: one message however many (a batch of 10,000 is one publish, not 10,000), a line per point.
     */
    pointsRecorded(points: readonly { point: RecordedGpsPoint; devicePublic: boolean }[]): void {
      if (points.length === 0) return;
      // Not knowing who listens (the store did not answer) is publishing as if someone did.
      const listeners = points.length > ASK_ABOVE_POINTS ? kv.subscribers(POINTS).catch(() => 1) : 1;
      pointsPublished = pointsPublished.then(async () => {
        if ((await listeners) === 0) return;
        const message = points
          .map(({ point, devicePublic }) => `${devicePublic ? 1 : 0}${pointJson(point)}`)
          .join('\n');
        kv.publish(POINTS, message).catch((err: unknown) =>
          log.warn({ err }, 'could not publish new points to WebSocket subscribers'),
        );
      });
    },
  };
}

export type RealtimeService = ReturnType<typeof createRealtimeService>;
