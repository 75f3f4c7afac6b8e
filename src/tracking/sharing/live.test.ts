import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '../../../test/client.js';
import { buildTestApp, createUser, testConfig, type TestApp } from '../../../test/helpers.js';
import { openSocket, type TestSocket } from '../../../test/ws-client.js';

const SPEEDS = { speed_kmh: 1, speed_mps: 0.28, speed_mph: 0.62, speed_knots: 0.54 };

/** The WebSocket gps channel follows the visibility rule: a self-service user gets their own and shared points only. */
describe('live points for self-service users', () => {
  let t: TestApp;
  let base: string;
  const opened: TestSocket[] = [];
  beforeAll(async () => {
    t = await buildTestApp({ config: { rateLimit: { ...testConfig().rateLimit, gpsWrite: 10_000, user: 10_000 } } });
    base = await t.app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    for (const socket of opened) socket.close();
    await t.close();
  });

  const person = async () => {
    const user = await createUser(t.app);
    return { id: user.id, api: t.as(user.token) };
  };
  /** A socket of the user, subscribed to gps. */
  const listen = async (api: Client) => {
    const { ticket } = (await api.post('/v1/ws/ticket').expect(200)).body;
    const socket = await openSocket(base, { protocols: ['service-ticket', ticket] });
    opened.push(socket);
    await socket.next('Welcome');
    await socket.request({ type: 'Subscribe', channel: 'gps', id: 'gps' }, 'Subscribed');
    return socket;
  };
  let second = 1_700_000_000;
  const send = async (api: Client, deviceId: string) =>
    (
      await api
        .post('/v1/gps', { device_id: deviceId, latitude: 54, longitude: 10, timestamp: second++, ...SPEEDS })
        .expect(201)
    ).body.data.id;
  /** Waits for the point on the owner's socket, then up to 300 ms on the other's: whether it came there too. */
  const heardBy = async (owner: TestSocket, other: TestSocket, pointId: string) => {
    expect((await owner.next('GpsPoint')).data).toMatchObject({ id: pointId });
    const heard = await other.next('GpsPoint', 300).catch(() => undefined);
    return (heard?.data as { id?: string } | undefined)?.id === pointId;
  };

  it('delivers a device’s points to its owner and a grantee, never to a stranger, and stops at revocation', async () => {
    const owner = await person();
    const friend = await person();
    const stranger = await person();
    const device = (await owner.api.post('/v1/devices', { name: 'Dinghy' }).expect(201)).body.data;
    const share = (
      await owner.api.post(`/v1/devices/${device.id}/shares`, { user_id: friend.id, level: 'live' }).expect(201)
    ).body.data;
    const [ownerSocket, friendSocket, strangerSocket] = [
      await listen(owner.api),
      await listen(friend.api),
      await listen(stranger.api),
    ];

    const first = await send(owner.api, device.id);
    expect(await heardBy(ownerSocket, friendSocket, first)).toBe(true);
    expect(strangerSocket.pending().filter((message) => message.type === 'GpsPoint')).toEqual([]);

    await owner.api.delete(`/v1/shares/${share.id}`).expect(204);
    // The open subscription reads its grants anew once told; within a second no point reaches the friend.
    const deadline = Date.now() + 1_500;
    let stillHeard = true;
    while (stillHeard && Date.now() < deadline)
      stillHeard = await heardBy(ownerSocket, friendSocket, await send(owner.api, device.id));
    expect(stillHeard).toBe(false);
    expect(strangerSocket.pending().filter((message) => message.type === 'GpsPoint')).toEqual([]);
  });
});
