import type { Grant } from '../../tracking/sharing/index.js';
import type { FastifyBaseLogger } from 'fastify';
import { Compile } from 'typebox/compile';
import type { WebSocket, RawData } from 'ws';
import { ClientMessages, CloseCodes, type ClientMessage, type ServerMessage } from './messages.js';

/** The server pings every connection this often; one that has not answered the previous ping is dropped. */
export const HEARTBEAT_MS = 30_000;
/** How often every connection's credential is read again, besides the invalidations that arrive at once. */
export const RECHECK_EVERY_MS = 300_000;
/** Channels one connection may hold at once. */
export const MAX_SUBSCRIPTIONS = 20;
/** Bytes queued for a connection beyond which it is dropped rather than buffered without limit. */
export const MAX_BUFFERED_BYTES = 1024 * 1024;
/** Sockets written per turn of the event loop when a message goes to many. */
const DELIVERY_CHUNK = 1000;
/** Connections one node holds at most; beyond, upgrades are refused with 503. */
export const MAX_CONNECTIONS = 50_000;
/** Anonymous connections from one address at most (credentialed ones are accountable and revocable). */
export const MAX_ANONYMOUS_PER_ADDRESS = 100;
/** Batches of the bot being written at once before its socket stops reading. */
const MAX_BOT_BATCHES_IN_FLIGHT = 2;
/** Messages a client may send per window before the connection is closed (1008); the system key is not counted. */
const MESSAGE_BUDGET = 100;
const MESSAGE_WINDOW_MS = 10_000;

const validators = new Map(Object.entries(ClientMessages).map(([type, schema]) => [type, Compile(schema)]));

/** Who is at the other end of a connection, and what they may receive. */
export interface Peer {
  /** The user the connection acts for; null when anonymous or the system key itself. */
  userId: string | null;
  isSystem: boolean;
  /** Whether the peer holds a permission (super admins and the system key hold all). */
  may(permission: string): boolean;
  /** The credential the connection was opened with, re-checked when credentials are invalidated. */
  credential: { hash: string; kind: 'session' | 'api_key' | 'oauth_token' } | null;
  /** Epoch ms at which the credential runs out (the connection is closed then); null: never. */
  expiresAt: number | null;
  /** A user relayed by the system key (?userId=): only the key is re-checked. */
  relayed?: true;
  /** Holds gps:read: every point goes to it (worked out once, not per point). */
  readsAllPoints?: boolean;
  /**
   * A self-service user without gps:read: the grants new points are judged by (their own devices and those
   * shared with them; docs/sharing.md). Replaced when they change.
   */
  liveGrants?: readonly Grant[] | null;
}

export interface Connection {
  readonly socket: WebSocket;
  /** The client's address (counted for anonymous connections). */
  readonly address: string;
  peer: Peer;
  readonly channels: Set<string>;
  alive: boolean;
  messages: number;
  windowStart: number;
}

/** What a client may subscribe to; `undefined` means there is no such channel. */
export function channelAccess(peer: Peer, channel: string): 'allowed' | 'forbidden' | undefined {
  if (channel === 'vessels' || channel.startsWith('public')) return 'allowed';
  if (channel === 'gps') return peer.may('gps:read') || peer.liveGrants ? 'allowed' : 'forbidden';
  if (channel === 'events')
    return peer.may('events:read') || (peer.may('events:read_own') && peer.liveGrants) ? 'allowed' : 'forbidden';
  return undefined;
}

/** What the community bot sends besides the common messages. */
export type BotMessage = Extract<ClientMessage, { type: 'SyncData' | 'SyncError' }>;

export interface HubHandlers {
  /** A system-key connection publishes on a public* channel (to every node). */
  publish(channel: string, data: unknown): Promise<void>;
  /** A message of the identified community bot; while several are still being handled, the bot's socket is paused. */
  fromBot(message: BotMessage): Promise<void> | void;
  /**
   * A channel gained its first or lost its last subscriber on this node. A promise holds back the
   * Subscribed answer of the first one until it settles (the node may have a pub/sub channel to join).
   */
  channelChanged(channel: string): Promise<void> | void;
}

/**
 * The connections of this node: who is subscribed to what, and delivery to them. Cross-node delivery
 * (pub/sub) is the service's concern; the hub only ever talks to its own sockets.
 */
export class Hub {
  readonly #connections = new Set<Connection>();
  readonly #byChannel = new Map<string, Set<Connection>>();
  readonly #byUser = new Map<string, Set<Connection>>();
  readonly #byCredential = new Map<string, Set<Connection>>();
  readonly #anonymousByAddress = new Map<string, number>();
  /** The community bot's connection on this node, once it has identified itself. */
  #bot: Connection | undefined;
  #botBatchesInFlight = 0;
  #heartbeat: NodeJS.Timeout | undefined;

  constructor(
    private readonly handlers: HubHandlers,
    private readonly log: FastifyBaseLogger,
    private readonly nowMs: () => number,
  ) {}

  /**
   * Every HEARTBEAT_MS: drops peers that did not answer the last ping and closes connections whose
   * credential ran out; every RECHECK_EVERY_MS also hands all connections to `recheck` (a safety net:
   * revocations arrive through the credential cache's invalidations at once).
   */
  start(recheck: (connections: Connection[]) => void): void {
    let beats = 0;
    this.#heartbeat = setInterval(() => {
      const now = this.nowMs();
      for (const connection of this.#connections) {
        const { expiresAt } = connection.peer;
        if (!connection.alive) connection.socket.terminate();
        else if (expiresAt !== null && expiresAt <= now)
          connection.socket.close(CloseCodes.credentialRevoked, 'credential expired');
        else {
          connection.alive = false;
          connection.socket.ping();
        }
      }
      if (++beats % (RECHECK_EVERY_MS / HEARTBEAT_MS) === 0) recheck([...this.#connections]);
    }, HEARTBEAT_MS).unref();
  }

  /** Why a new connection of this peer from this address is refused, if it is. */
  refusal(peer: Peer, address: string): 'node_full' | 'address_full' | undefined {
    if (this.#connections.size >= MAX_CONNECTIONS) return 'node_full';
    if (!peer.credential && (this.#anonymousByAddress.get(address) ?? 0) >= MAX_ANONYMOUS_PER_ADDRESS)
      return 'address_full';
    return undefined;
  }

  /** Whether anyone on this node listens on the channel (so a message need not even be built). */
  hasSubscribers(channel: string): boolean {
    return this.#byChannel.has(channel);
  }

  /** Closes every connection with 1001 (going away): clients reconnect to another node. */
  stop(): void {
    clearInterval(this.#heartbeat);
    for (const connection of this.#connections) connection.socket.close(CloseCodes.goingAway, 'server shutting down');
  }

  stats(): { connections: number; subscriptions: number } {
    let subscriptions = 0;
    for (const subscribers of this.#byChannel.values()) subscriptions += subscribers.size;
    return { connections: this.#connections.size, subscriptions };
  }

  add(socket: WebSocket, peer: Peer, address: string): Connection {
    const connection: Connection = {
      socket,
      address,
      peer,
      channels: new Set(),
      alive: true,
      messages: 0,
      windowStart: this.nowMs(),
    };
    this.#connections.add(connection);
    if (!peer.credential) this.#anonymousByAddress.set(address, (this.#anonymousByAddress.get(address) ?? 0) + 1);
    this.#index(connection);
    socket.on('pong', () => (connection.alive = true));
    socket.on('message', (data, isBinary) => this.#onMessage(connection, data, isBinary));
    socket.on('close', () => this.#remove(connection));
    this.send(connection, {
      type: 'Welcome',
      userId: peer.userId,
      heartbeatSecs: HEARTBEAT_MS / 1000,
      maxSubscriptions: MAX_SUBSCRIPTIONS,
    });
    return connection;
  }

  /** The community bot, when it is connected to this node. */
  get bot(): Connection | undefined {
    return this.#bot;
  }

  /**
   * Sends `frame` (serialised once by the caller) to every subscriber of `channel` on this node, in
   * chunks of DELIVERY_CHUNK sockets per turn of the event loop: writing to 10,000 sockets takes about
   * 100 ms of system calls here, which must not hold every other request (and the POST that caused it).
   * Chunks of later messages are scheduled after those of earlier ones, so each socket keeps the order.
   * With `only`, the subscribers whose peer it accepts (read at delivery: access changed by a recheck applies).
   */
  deliver(channel: string, frame: Buffer, only?: (peer: Peer) => boolean): void {
    const subscribers = this.#byChannel.get(channel);
    if (!subscribers) return;
    if (subscribers.size <= DELIVERY_CHUNK) {
      for (const connection of subscribers) if (!only || only(connection.peer)) this.#sendFrame(connection, frame);
      return;
    }
    const targets = only ? [...subscribers].filter((connection) => only(connection.peer)) : [...subscribers];
    const sendFrom = (start: number) => {
      const end = Math.min(start + DELIVERY_CHUNK, targets.length);
      for (let i = start; i < end; i++) this.#sendFrame(targets[i]!, frame);
      if (end < targets.length) setImmediate(sendFrom, end);
    };
    sendFrom(0);
  }

  /** Sends the message to every connection of the user; with `close`, closes them after it (4001). */
  signOut(userId: string, message: ServerMessage, close: boolean): void {
    for (const connection of this.#byUser.get(userId) ?? []) {
      this.send(connection, message);
      if (close) connection.socket.close(CloseCodes.signedOut, message.type);
    }
  }

  /** The connections of one user on this node. */
  ofUser(userId: string): Connection[] {
    return [...(this.#byUser.get(userId) ?? [])];
  }

  /** Connections opened with one of these credentials (all connections with a credential for 'all'). */
  withCredentials(hashes: string[] | 'all'): Connection[] {
    if (hashes === 'all') return [...this.#connections].filter((connection) => connection.peer.credential);
    return hashes.flatMap((hash) => [...(this.#byCredential.get(hash) ?? [])]);
  }

  /** Re-checked access: subscriptions the peer may no longer hold are ended with an Error naming them. */
  updatePeer(connection: Connection, peer: Peer): void {
    this.#unindex(connection);
    connection.peer = peer;
    this.#index(connection);
    for (const channel of connection.channels) {
      if (channelAccess(peer, channel) === 'allowed') continue;
      this.#leave(connection, channel);
      this.send(connection, {
        type: 'Error',
        code: 'ws.channel_forbidden',
        reason: 'Access to this channel was withdrawn',
        channel,
      });
    }
  }

  send(connection: Connection, message: ServerMessage): void {
    this.#sendFrame(connection, Buffer.from(JSON.stringify(message)));
  }

  #sendFrame(connection: Connection, frame: Buffer): void {
    const { socket } = connection;
    if (socket.readyState !== socket.OPEN) return;
    if (socket.bufferedAmount + frame.length > MAX_BUFFERED_BYTES) {
      // The close frame would queue behind what the peer does not read: cut the connection.
      this.log.info({ buffered: socket.bufferedAmount }, 'dropping a WebSocket client that does not keep up');
      socket.terminate();
      this.#remove(connection);
      return;
    }
    socket.send(frame, { binary: false });
  }

  #onMessage(connection: Connection, data: RawData, isBinary: boolean): void {
    if (!connection.peer.isSystem && !this.#withinBudget(connection))
      return connection.socket.close(CloseCodes.tooManyMessages, 'too many messages');
    const message = isBinary ? undefined : validated(parse(data));
    if (typeof message === 'string' || message === undefined) {
      this.send(connection, {
        type: 'Error',
        code: 'ws.invalid_message',
        reason: message ?? 'Messages are JSON text frames',
      });
      return;
    }
    switch (message.type) {
      case 'Subscribe':
        return this.#subscribe(connection, message.channel, message.id);
      case 'Unsubscribe':
        this.#leave(connection, message.channel);
        return this.send(connection, { type: 'Unsubscribed', channel: message.channel, id: message.id });
      case 'Ping':
        return this.send(connection, { type: 'Pong', id: message.id });
      case 'Publish':
        return this.#publish(connection, message.channel, message.data, message.id);
      case 'Identify':
        return this.#identify(connection, message.id);
      case 'SyncData':
      case 'SyncError':
        if (connection !== this.#bot)
          return this.send(connection, {
            type: 'Error',
            code: 'ws.not_the_bot',
            reason: 'Only the identified community bot sends sync answers',
          });
        return this.#fromBot(connection, message);
    }
  }

  #subscribe(connection: Connection, channel: string, id: string | undefined): void {
    const access = channelAccess(connection.peer, channel);
    if (access !== 'allowed') {
      const code = access === 'forbidden' ? 'ws.channel_forbidden' : 'ws.unknown_channel';
      const reason =
        access === 'forbidden' ? `Not allowed to subscribe to ${channel}` : `There is no channel ${channel}`;
      return this.send(connection, { type: 'Error', code, reason, channel, id });
    }
    if (!connection.channels.has(channel) && connection.channels.size >= MAX_SUBSCRIPTIONS) {
      return this.send(connection, {
        type: 'Error',
        code: 'ws.too_many_subscriptions',
        reason: `At most ${MAX_SUBSCRIPTIONS} channels per connection`,
        channel,
        id,
      });
    }
    connection.channels.add(channel);
    let subscribers = this.#byChannel.get(channel);
    const first = !subscribers;
    if (!subscribers) this.#byChannel.set(channel, (subscribers = new Set()));
    subscribers.add(connection);
    const joined = first ? this.handlers.channelChanged(channel) : undefined;
    if (joined) void joined.then(() => this.send(connection, { type: 'Subscribed', channel, id }));
    else this.send(connection, { type: 'Subscribed', channel, id });
  }

  #publish(connection: Connection, channel: string, data: unknown, id: string | undefined): void {
    if (!connection.peer.isSystem || !channel.startsWith('public')) {
      return this.send(connection, {
        type: 'Error',
        code: 'ws.publish_forbidden',
        reason: 'Only the system key publishes, on public* channels',
        channel,
        id,
      });
    }
    this.handlers.publish(channel, data).then(
      () => this.send(connection, { type: 'Published', channel, id }),
      (err: unknown) => {
        this.log.warn({ err }, 'could not publish a public WebSocket message');
        this.send(connection, {
          type: 'Error',
          code: 'ws.publish_failed',
          reason: 'The message could not be published',
          channel,
          id,
        });
      },
    );
  }

  #identify(connection: Connection, id: string | undefined): void {
    if (!connection.peer.isSystem || connection.peer.userId) {
      return this.send(connection, {
        type: 'Error',
        code: 'ws.identify_forbidden',
        reason: 'Only the system key identifies as the community bot',
        id,
      });
    }
    // The newest connection of the bot is the one asked (a reconnecting bot may overlap its old socket).
    this.#bot = connection;
    this.send(connection, { type: 'Identified', client: 'community_bot', id });
  }

  /**
   * Backpressure for the bot's batches: while MAX_BOT_BATCHES_IN_FLIGHT are being written, the socket
   * stops reading, so a 100,000-member guild never sits in memory waiting for the database.
   */
  #fromBot(connection: Connection, message: BotMessage): void {
    const handled = this.handlers.fromBot(message);
    if (!handled) return;
    if (++this.#botBatchesInFlight >= MAX_BOT_BATCHES_IN_FLIGHT) connection.socket.pause();
    void handled.finally(() => {
      if (--this.#botBatchesInFlight < MAX_BOT_BATCHES_IN_FLIGHT) connection.socket.resume();
    });
  }

  #withinBudget(connection: Connection): boolean {
    const now = this.nowMs();
    if (now - connection.windowStart >= MESSAGE_WINDOW_MS) {
      connection.windowStart = now;
      connection.messages = 0;
    }
    return ++connection.messages <= MESSAGE_BUDGET;
  }

  #leave(connection: Connection, channel: string): void {
    connection.channels.delete(channel);
    const subscribers = this.#byChannel.get(channel);
    subscribers?.delete(connection);
    if (subscribers?.size !== 0) return;
    this.#byChannel.delete(channel);
    void this.handlers.channelChanged(channel);
  }

  #remove(connection: Connection): void {
    if (!this.#connections.delete(connection)) return;
    if (!connection.peer.credential) {
      const left = (this.#anonymousByAddress.get(connection.address) ?? 1) - 1;
      if (left > 0) this.#anonymousByAddress.set(connection.address, left);
      else this.#anonymousByAddress.delete(connection.address);
    }
    if (this.#bot === connection) this.#bot = undefined;
    for (const channel of connection.channels) this.#leave(connection, channel);
    this.#unindex(connection);
  }

  #index(connection: Connection): void {
    const { userId, credential } = connection.peer;
    if (userId) addTo(this.#byUser, userId, connection);
    if (credential) addTo(this.#byCredential, credential.hash, connection);
  }

  #unindex(connection: Connection): void {
    const { userId, credential } = connection.peer;
    if (userId) removeFrom(this.#byUser, userId, connection);
    if (credential) removeFrom(this.#byCredential, credential.hash, connection);
  }
}

function addTo(index: Map<string, Set<Connection>>, key: string, connection: Connection): void {
  let set = index.get(key);
  if (!set) index.set(key, (set = new Set()));
  set.add(connection);
}

function removeFrom(index: Map<string, Set<Connection>>, key: string, connection: Connection): void {
  const set = index.get(key);
  set?.delete(connection);
  if (set?.size === 0) index.delete(key);
}

function parse(data: RawData): unknown {
  try {
    return JSON.parse(Array.isArray(data) ? Buffer.concat(data).toString() : data.toString());
  } catch {
    return undefined;
  }
}

/** The message, or why it is not one (naming the field). */
function validated(message: unknown): ClientMessage | string | undefined {
  if (message === undefined) return undefined;
  const type = (message as { type?: unknown } | null)?.type;
  const validator = typeof type === 'string' ? validators.get(type) : undefined;
  if (!validator) return `type must be one of ${[...validators.keys()].join(', ')}`;
  if (validator.Check(message)) return message as ClientMessage;
  const error = validator.Errors(message)[0];
  return `${type}: ${error?.instancePath ? `${error.instancePath.slice(1)} ` : ''}${error?.message ?? 'malformed'}`;
}
