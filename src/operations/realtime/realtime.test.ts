import { EventEmitter } from 'node:events';
import type { WebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashToken } from '../../platform/auth/tokens.js';
import { buildApp } from '../../app.js';
import { client, type RequestBody } from '../../../test/client.js';
import {
  bearer,
  buildTestApp,
  createApiKey,
  createRoleWith,
  createUser,
  login,
  TEST_ADMIN,
  TEST_SYSTEM_KEY,
  type TestApp,
  testConfig,
  twoNodes,
  UNAUTHORIZED,
  UNKNOWN_ID,
} from '../../../test/helpers.js';
import { openSocket, refusedHandshake, socketAs, type TestSocket } from '../../../test/ws-client.js';
import { MAX_SUBSCRIPTIONS } from './service.js';

// Each test posts its points at times of its own: a point of the same device (or of none), time and position is
// a resend, stored and published once, so in a shuffled order one test's point would swallow another's.
const POINT = {
  latitude: 53.55,
  longitude: 9.99,
  altitude: 3,
  heading: 270,
  timestamp: 1_767_225_600,
  speed_kmh: 18.52,
  speed_mps: 5.14,
  speed_mph: 11.51,
  speed_knots: 10,
};

let t: TestApp;
let base: string;
let admin: string;
const opened: TestSocket[] = [];
beforeAll(async () => {
  t = await buildTestApp({ config: { rateLimit: { ...testConfig().rateLimit, gpsWrite: 1000 } } });
  base = await t.app.listen({ host: '127.0.0.1', port: 0 });
  admin = await login(t.app, 'admin', TEST_ADMIN.password);
});
afterAll(async () => {
  for (const socket of opened) socket.close();
  await t.close();
});

/** Opens a socket (closed after the file) and takes its Welcome. */
async function connect(
  options: Parameters<typeof openSocket>[1] = {},
): Promise<{ socket: TestSocket; welcome: Record<string, unknown> }> {
  const socket = await openSocket(base, options);
  opened.push(socket);
  return { socket, welcome: await socket.next('Welcome') };
}
const withBearer = (token: string) => connect({ headers: bearer(token) });
const mintTicket = (token: string) => t.as(token).post('/v1/ws/ticket');
const subscribe = (socket: TestSocket, channel: string) =>
  socket.request({ type: 'Subscribe', channel, id: channel }, 'Subscribed');
const refusal = (socket: TestSocket, message: object) => {
  socket.send(message);
  return socket.next('Error');
};
const newDevice = async () => (await t.as(admin).post('/v1/devices', { name: 'Seeadler' }).expect(201)).body.data;
/** Each test sends points at times of its own: a point already stored (same device, time and position) is not published again. */
const postPoint = async (point: RequestBody<'post', '/v1/gps'>) =>
  (await t.as(admin).post('/v1/gps', point).expect(201)).body.data as Record<string, unknown>;
/** This node's count of open sockets, from the health check. */
const connections = async () => (await t.as(null).get('/v1/health').expect(200)).body.services.websocket.connections;

describe('POST /v1/ws/ticket', () => {
  it('gives a signed-in user a short-lived ticket; API keys, the system key and anonymous callers get none', async () => {
    const user = await createUser(t.app);
    const minted = await mintTicket(user.token);
    expect(minted.status).toBe(200);
    expect(minted.body).toEqual({ ticket: expect.stringMatching(/^wst_[A-Za-z0-9_-]{43}$/), expiresIn: 30 });

    const key = (await createApiKey(t.app, admin, { name: 'ws key', scopes: ['gps:read'] })).key;
    expect((await mintTicket(key)).body).toEqual({
      error: 'Forbidden',
      message:
        'A WebSocket ticket needs a user session or OAuth access token; API keys connect with Authorization: Bearer',
      code: 'ws.user_context_required',
    });
    expect((await mintTicket(TEST_SYSTEM_KEY).expect(403)).body.code).toBe('auth.system_key_not_permitted');
    expect((await t.as(null).post('/v1/ws/ticket')).body).toEqual(UNAUTHORIZED);
  });
});

describe('GET /v1/ws authentication', () => {
  it('accepts a ticket once, through the service-ticket subprotocol, as the user who minted it', async () => {
    const user = await createUser(t.app);
    const { ticket } = (await mintTicket(user.token).expect(200)).body;
    const { socket, welcome } = await connect({ protocols: ['service-ticket', ticket] });
    expect(socket.socket.protocol).toBe('service-ticket');
    expect(welcome).toEqual({
      type: 'Welcome',
      userId: user.id,
      heartbeatSecs: 30,
      maxSubscriptions: MAX_SUBSCRIPTIONS,
    });

    expect(await refusedHandshake(base, { protocols: ['service-ticket', ticket] })).toEqual({
      status: 401,
      body: {
        error: 'Unauthorized',
        message: 'The WebSocket ticket is unknown, expired or already used',
        code: 'ws.ticket_invalid',
      },
    });
    expect((await refusedHandshake(base, { protocols: ['service-ticket', 'wst_made-up'] })).status).toBe(401);
    expect((await refusedHandshake(base, { protocols: ['service-ticket'] })).body).toMatchObject({
      code: 'ws.ticket_missing',
    });
  });

  it('refuses a ticket whose session ended before it was used', async () => {
    const user = await createUser(t.app);
    const { ticket } = (await mintTicket(user.token).expect(200)).body;
    expect((await t.as(user.token).post('/v1/auth/logout')).status).toBe(200);
    expect((await refusedHandshake(base, { protocols: ['service-ticket', ticket] })).status).toBe(401);
  });

  it('takes a bearer credential; one that does not resolve is refused rather than made anonymous', async () => {
    const user = await createUser(t.app);
    expect((await withBearer(user.token)).welcome.userId).toBe(user.id);
    expect(await refusedHandshake(base, { headers: bearer('ses_not-a-session') })).toEqual({
      status: 401,
      body: UNAUTHORIZED,
    });
  });

  it('reads no token from the query string (the spec removed that way in): such a connection is anonymous', async () => {
    const user = await createUser(t.app);
    const { welcome } = await connect({ path: `/v1/ws?token=${user.token}&access_token=${user.token}` });
    expect(welcome.userId).toBeNull();
  });

  it('lets anyone in anonymously, and a plain GET is told to upgrade', async () => {
    expect((await connect()).welcome).toMatchObject({ type: 'Welcome', userId: null });
    const plain = await t.as(null).get('/v1/ws').expect(426);
    expect(plain.body.code).toBe('ws.upgrade_required');
  });

  it('lets only the system key relay a user with ?userId=, and only an existing one', async () => {
    const user = await createUser(t.app, ['role_user', 'role_api_read_only']);
    const relayed = await connect({ path: `/v1/ws?userId=${user.id}`, headers: bearer(TEST_SYSTEM_KEY) });
    expect(relayed.welcome.userId).toBe(user.id);
    await subscribe(relayed.socket, 'gps');
    expect(
      (await refusedHandshake(base, { path: `/v1/ws?userId=${UNKNOWN_ID}`, headers: bearer(TEST_SYSTEM_KEY) })).body,
    ).toMatchObject({ code: 'ws.user_not_found' });
    const other = await createUser(t.app);
    expect(
      (await refusedHandshake(base, { path: `/v1/ws?userId=${user.id}`, headers: bearer(other.token) })).body,
    ).toMatchObject({
      code: 'ws.relay_requires_system_key',
    });
    expect((await refusedHandshake(base, { path: `/v1/ws?userId=${user.id}` })).status).toBe(403);
  });
});

describe('a credential revoked during the handshake', () => {
  /** A socket as the hub uses it, recording how it was closed. */
  function fakeSocket() {
    const socket = Object.assign(new EventEmitter(), {
      OPEN: 1,
      readyState: 1,
      bufferedAmount: 0,
      closedWith: undefined as { code: number; reason: string } | undefined,
      send: () => undefined,
      ping: () => undefined,
      terminate: () => undefined,
      close(code: number, reason: string) {
        socket.closedWith = { code, reason };
      },
    });
    return socket;
  }

  it('is noticed when the connection enters the hub, not at the periodic recheck', async () => {
    const user = await createUser(t.app);
    const { realtime, credentials } = t.app.services;
    const hash = hashToken(user.token);
    const peer = await realtime.authenticate({
      protocols: [],
      authorization: { caller: await credentials.resolveHash(hash, 'session'), hash },
    });
    // Between the handshake's authentication and the upgrade's completion: the session ends (its
    // invalidation finds no connection to close yet).
    expect((await t.as(user.token).post('/v1/auth/logout')).status).toBe(200);
    const socket = fakeSocket();
    await realtime.open(socket as unknown as WebSocket, peer, '203.0.113.7');
    expect(socket.closedWith).toEqual({ code: 4003, reason: 'credential revoked' });

    // A credential still valid stays open.
    const other = await createUser(t.app);
    const otherHash = hashToken(other.token);
    const kept = fakeSocket();
    const otherPeer = await realtime.authenticate({
      protocols: [],
      authorization: { caller: await credentials.resolveHash(otherHash, 'session'), hash: otherHash },
    });
    await realtime.open(kept as unknown as WebSocket, otherPeer, '203.0.113.7');
    expect(kept.closedWith).toBeUndefined();
    kept.emit('close');
    socket.emit('close');
  });
});

describe('channels', () => {
  it('pushes a new point on gps, in its REST shape, to those who may read points; vessels of a public device to anyone, of another only to gps readers', async () => {
    const reader = await withBearer((await createApiKey(t.app, admin, { name: 'reader', scopes: ['gps:read'] })).key);
    const anonymous = await connect();
    const signedIn = await withBearer((await createUser(t.app)).token);
    await subscribe(reader.socket, 'gps');
    await subscribe(reader.socket, 'vessels');
    await subscribe(anonymous.socket, 'vessels');
    await subscribe(signedIn.socket, 'vessels');
    expect(await refusal(anonymous.socket, { type: 'Subscribe', channel: 'gps', id: 'g' })).toEqual({
      type: 'Error',
      code: 'ws.channel_forbidden',
      reason: 'Not allowed to subscribe to gps',
      channel: 'gps',
      id: 'g',
    });

    const device = await newDevice();
    expect(device).toMatchObject({ is_public: false });
    const stored = await postPoint({ ...POINT, device_id: device.id });
    expect(await reader.socket.next('GpsPoint')).toEqual({ type: 'GpsPoint', channel: 'gps', data: stored });
    const vessel = {
      type: 'VesselPosition',
      channel: 'vessels',
      data: {
        device_id: device.id,
        latitude: 53.55,
        longitude: 9.99,
        heading: 270,
        speed_knots: 10,
        timestamp: '2026-01-01T00:00:00.000Z',
      },
    };
    // A device that is not public: its vessel goes to the gps reader only (the pings below come after it).
    expect(await reader.socket.next('VesselPosition')).toEqual(vessel);
    for (const other of [anonymous, signedIn]) {
      await other.socket.request({ type: 'Ping' }, 'Pong');
      expect(other.socket.pending()).toEqual([]);
    }

    // Made public by whoever may update the device: the next point reaches everyone.
    const patched = await t.as(admin).patch(`/v1/devices/${device.id}`, { is_public: true }).expect(200);
    expect(patched.body.data).toMatchObject({ is_public: true });
    // (A point of its own: the same device, time and position again would be a resend, stored and published once.)
    await postPoint({ ...POINT, device_id: device.id, timestamp: POINT.timestamp + 1 });
    const later = { ...vessel, data: { ...vessel.data, timestamp: '2026-01-01T00:00:01.000Z' } };
    expect(await reader.socket.next('VesselPosition')).toEqual(later);
    expect(await anonymous.socket.next('VesselPosition')).toEqual(later);
    expect(await signedIn.socket.next('VesselPosition')).toEqual(later);

    // A point without a device has no vessel; gps readers get it without device_id, as REST shows it.
    await reader.socket.next('GpsPoint');
    const loose = await postPoint({ ...POINT, timestamp: POINT.timestamp + 10 });
    expect(await reader.socket.next('GpsPoint')).toEqual({ type: 'GpsPoint', channel: 'gps', data: loose });
    expect(loose).not.toHaveProperty('device_id');
    await anonymous.socket.request({ type: 'Ping' }, 'Pong');
    expect(anonymous.socket.pending()).toEqual([]);
  });

  it('does not stream gps to the system key itself (REST refuses it /v1/gps too), only to a user it relays', async () => {
    const system = await withBearer(TEST_SYSTEM_KEY);
    expect(await refusal(system.socket, { type: 'Subscribe', channel: 'gps' })).toMatchObject({
      code: 'ws.channel_forbidden',
    });
  });

  it('public* channels carry what the system key publishes to everyone; nobody else publishes', async () => {
    const listener = await connect();
    await subscribe(listener.socket, 'public.notices');
    const system = await withBearer(TEST_SYSTEM_KEY);
    expect(
      await system.socket.request(
        { type: 'Publish', channel: 'public.notices', data: { text: 'Harbour closed' }, id: 'p1' },
        'Published',
      ),
    ).toEqual({
      type: 'Published',
      channel: 'public.notices',
      id: 'p1',
    });
    expect(await listener.socket.next('PublicMessage')).toEqual({
      type: 'PublicMessage',
      channel: 'public.notices',
      data: { text: 'Harbour closed' },
    });

    const user = await withBearer((await createUser(t.app)).token);
    expect(await refusal(user.socket, { type: 'Publish', channel: 'public.notices', data: 1 })).toMatchObject({
      code: 'ws.publish_forbidden',
    });
    expect(await refusal(system.socket, { type: 'Publish', channel: 'gps', data: 1 })).toMatchObject({
      code: 'ws.publish_forbidden',
    });
  });

  it('unsubscribes, names unknown channels, and caps subscriptions per connection', async () => {
    const { socket } = await connect();
    expect(await refusal(socket, { type: 'Subscribe', channel: 'secrets' })).toEqual({
      type: 'Error',
      code: 'ws.unknown_channel',
      reason: 'There is no channel secrets',
      channel: 'secrets',
    });
    for (let i = 0; i < MAX_SUBSCRIPTIONS; i++) await subscribe(socket, `public.${i}`);
    expect(await refusal(socket, { type: 'Subscribe', channel: 'public.extra' })).toMatchObject({
      code: 'ws.too_many_subscriptions',
      channel: 'public.extra',
    });
    expect(await socket.request({ type: 'Unsubscribe', channel: 'public.0' }, 'Unsubscribed')).toEqual({
      type: 'Unsubscribed',
      channel: 'public.0',
    });
    await subscribe(socket, 'public.extra');
  });

  it('answers malformed messages with an error naming what is wrong, and keeps the connection', async () => {
    const { socket } = await connect();
    socket.socket.send('not json');
    expect(await socket.next('Error')).toEqual({
      type: 'Error',
      code: 'ws.invalid_message',
      reason: 'Messages are JSON text frames',
    });
    expect((await refusal(socket, { type: 'Shout' })).reason).toBe(
      'type must be one of Subscribe, Unsubscribe, Ping, Publish, Identify, SyncData, SyncError',
    );
    expect((await refusal(socket, { type: 'Subscribe' })).reason).toMatch(/^Subscribe: .*channel/);
    expect((await refusal(socket, { type: 'Subscribe', channel: 'a b' })).reason).toMatch(/^Subscribe: channel /);
    await subscribe(socket, 'vessels');
  });
});

describe('connection limits', () => {
  // The anonymous connections of an address are limited per node (each node guards its own memory), and health counts
  // one node's connections: on two nodes an address may hold 100 on each.
  it.skipIf(twoNodes)(
    'refuses more than 100 anonymous connections from one address with 429; credentialed ones are not counted',
    async () => {
      const sockets: TestSocket[] = [];
      let refused: { status: number; body: unknown } | undefined;
      try {
        while (!refused && sockets.length <= 100) {
          try {
            sockets.push(await openSocket(base));
          } catch {
            refused = await refusedHandshake(base);
          }
        }
        expect(refused).toEqual({
          status: 429,
          body: {
            error: 'TooManyRequests',
            message: 'Too many anonymous WebSocket connections from this address',
            code: 'ws.too_many_from_address',
          },
        });
        expect((await withBearer((await createUser(t.app)).token)).welcome.type).toBe('Welcome');
      } finally {
        const before = await connections();
        for (const socket of sockets) socket.close();
        // The next test may connect anonymously at once: wait until the server has let these go.
        await expect.poll(connections).toBeLessThanOrEqual(before - sockets.length);
      }
    },
  );
});

describe('message limits', () => {
  it('closes a connection that sends more than 64 KiB in one message', async () => {
    const { socket } = await connect();
    socket.send({ type: 'Ping', id: 'x'.repeat(70 * 1024) });
    expect((await socket.closed).code).toBe(1009);
  });
});

describe('the connection follows its credential', () => {
  it('closes with 4003 when the session it was opened with ends', async () => {
    const user = await createUser(t.app);
    const { socket } = await withBearer(user.token);
    expect((await t.as(user.token).post('/v1/auth/logout')).status).toBe(200);
    expect(await socket.closed).toEqual({ code: 4003, reason: 'credential revoked' });
  });

  it('withdraws gps when the role that allowed it is taken away', async () => {
    const roleId = await createRoleWith(t.app, `ws_reader_${Date.now()}`, ['gps:read']);
    // Without the User role: its own-scope gps:read_own would keep the channel open, narrowed to own devices.
    const user = await createUser(t.app, [roleId]);
    const { socket } = await withBearer(user.token);
    await subscribe(socket, 'gps');
    const removed = await t.as(admin).delete(`/v1/users/${user.id}/roles/${roleId}`);
    expect(removed.status).toBe(204);
    expect(await socket.next('Error')).toEqual({
      type: 'Error',
      code: 'ws.channel_forbidden',
      reason: 'Access to this channel was withdrawn',
      channel: 'gps',
    });
  });
});

describe('relayed users', () => {
  it('withdraws gps from a user the system key relays when the role that allowed it is taken away', async () => {
    const roleId = await createRoleWith(t.app, `ws_relayed_${Date.now()}`, ['gps:read']);
    const user = await createUser(t.app, ['role_user', roleId]);
    const { socket } = await connect({ path: `/v1/ws?userId=${user.id}`, headers: bearer(TEST_SYSTEM_KEY) });
    await subscribe(socket, 'gps');
    const removed = await t.as(admin).delete(`/v1/users/${user.id}/roles/${roleId}`);
    expect(removed.status).toBe(204);
    expect(await socket.next('Error')).toEqual({
      type: 'Error',
      code: 'ws.channel_forbidden',
      reason: 'Access to this channel was withdrawn',
      channel: 'gps',
    });
    await postPoint({ ...POINT, timestamp: POINT.timestamp + 2 });
    await socket.request({ type: 'Ping' }, 'Pong');
    expect(socket.pending()).toEqual([]);
  });
});

describe('health and two nodes', () => {
  it("health counts this node's connections and subscriptions", async () => {
    // Asked of each node: the counts are per node, and on two nodes the socket is on one of them.
    const websocketOfEach = async () =>
      Promise.all(
        t.nodes.map(async (node) => (await client(node, null).get('/v1/health').expect(200)).body.services.websocket),
      );
    const before = await websocketOfEach();
    const { socket } = await connect();
    await subscribe(socket, 'vessels');
    const after = await websocketOfEach();
    expect(after.map((node) => node.status)).toEqual(t.nodes.map(() => 'up'));
    expect(Math.max(...after.map((node) => node.connections))).toBeGreaterThanOrEqual(1);
    expect(Math.max(...after.map((node) => node.subscriptions))).toBeGreaterThanOrEqual(1);
    expect(before.map((node) => typeof node.connections)).toEqual(t.nodes.map(() => 'number'));
  });

  it('a point recorded and a sign-out on one node reach a client of the other', async () => {
    const second = await buildApp(t.config, { database: t.database, kv: t.kv, clock: t.clock }, { logger: false });
    try {
      const secondBase = await second.listen({ host: '127.0.0.1', port: 0 });
      const user = await createUser(t.app, ['role_user', 'role_api_read_only']);
      const onSecond = await socketAs(secondBase, user.token);
      await subscribe(onSecond, 'gps');
      // A point of its own: one already stored (same time and position) is not published again.
      const stored = await postPoint({ ...POINT, timestamp: POINT.timestamp + 3 });
      expect((await onSecond.next('GpsPoint')).data).toEqual(stored);
      await t.as(user.token).post('/v1/auth/logout-everywhere', { reason: 'lost_phone' });
      expect(await onSecond.next('forceLogout')).toEqual({ type: 'forceLogout', reason: 'lost_phone' });
      expect((await onSecond.closed).code).toBe(4001);
    } finally {
      await second.close();
    }
  });
});

describe('points of a large batch', () => {
  it('reach a subscriber of another node (the batch asks who listens before it builds the message)', async () => {
    const second = await buildApp(t.config, { database: t.database, kv: t.kv, clock: t.clock }, { logger: false });
    try {
      const onSecond = await socketAs(await second.listen({ host: '127.0.0.1', port: 0 }), admin);
      await subscribe(onSecond, 'gps');
      // Times of its own (a resend is published once), more points than are published without asking.
      const points = Array.from({ length: 100 }, (_, i) => ({ ...POINT, timestamp: POINT.timestamp + 1000 + i }));
      const batch = await t.as(admin).post('/v1/gps/batch', points);
      expect(batch.body).toEqual({ stored: 100, duplicates: 0, refused: [] });
      const received = [];
      for (let i = 0; i < 100; i++) received.push((await onSecond.next('GpsPoint')).data as { timestamp: string });
      expect(received.map((point) => point.timestamp)).toEqual(
        points.map((point) => new Date(point.timestamp * 1000).toISOString()),
      );
    } finally {
      await second.close();
    }
  });
});

describe('shutdown', () => {
  it('tells open connections the server is going away (1001) so clients reconnect elsewhere', async () => {
    const node = await buildApp(t.config, { database: t.database, kv: t.kv, clock: t.clock }, { logger: false });
    const socket = await openSocket(await node.listen({ host: '127.0.0.1', port: 0 }));
    await socket.next('Welcome');
    await node.close();
    expect(await socket.closed).toEqual({ code: 1001, reason: 'server shutting down' });
  });
});

describe('a client that stops reading', () => {
  // Health counts the connections of the node it asks, which may not be the socket's.
  it.skipIf(twoNodes)(
    'is dropped once its send buffer passes the bound, and the node stops holding its messages',
    async () => {
      const { socket } = await connect();
      await subscribe(socket, 'public.flood');
      const before = await connections();
      // The client stops reading; whatever the kernel buffers fill with, the server's queue does not grow past 1 MiB.
      (socket.socket as unknown as { _socket: { pause(): void } })._socket.pause();
      const chunk = JSON.stringify({ channel: 'public.flood', data: 'x'.repeat(60_000) });
      let sent = 0;
      while ((await connections()) === before && sent < 2000) {
        for (let i = 0; i < 20; i++) await t.kv.publish('ws:public', chunk);
        sent += 20;
      }
      expect(await connections()).toBe(before - 1);
      expect(sent).toBeLessThan(2000);
    },
  );
});

describe('GET /v1/asyncapi.json', () => {
  it('documents every message of the protocol as AsyncAPI 3.0', async () => {
    const response = await t.as(null).raw({ method: 'GET', url: '/v1/asyncapi.json' });
    expect(response.status).toBe(200);
    const document = response.body;
    expect(document).toMatchObject({ asyncapi: '3.0.0', channels: { socket: { address: '/v1/ws' } } });
    expect(Object.keys(document.components.messages)).toEqual(
      expect.arrayContaining(['Subscribe', 'serverForceLogout', 'serverAppLogout', 'serverGpsPoint']),
    );
    expect(document.operations.receiveSubscribe).toEqual({
      action: 'receive',
      channel: { $ref: '#/channels/socket' },
      messages: [{ $ref: '#/channels/socket/messages/Subscribe' }],
    });
    expect(document.components.messages.Subscribe.payload.required).toEqual(['type', 'channel']);
  });

  it('declares how a client authenticates as security schemes a tool reads: Bearer, the ticket subprotocol, anonymous', async () => {
    const document = (await t.as(null).raw({ method: 'GET', url: '/v1/asyncapi.json' })).body;
    expect(document.components.securitySchemes).toMatchObject({
      bearer: { type: 'http', scheme: 'bearer' },
      ticket: { type: 'httpApiKey', in: 'header', name: 'Sec-WebSocket-Protocol' },
      anonymous: {},
    });
    expect(document.servers.waygate.security.map((ref: { $ref: string }) => ref.$ref)).toEqual(
      ['bearer', 'ticket', 'anonymous'].map((name) => `#/components/securitySchemes/${name}`),
    );
  });
});
