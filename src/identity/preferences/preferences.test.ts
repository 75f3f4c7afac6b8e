import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unchecked } from '../../../test/client.js';
import {
  buildTestApp,
  createApiKey,
  createUser,
  forbidden,
  ownerlessKey,
  UNAUTHORIZED,
  type TestApp,
} from '../../../test/helpers.js';

const PUBLIC_URL = 'https://waygate.example';
const SELF = { self: `${PUBLIC_URL}/v1/users/me/preferences` };
const DEFAULTS = { speed_unit: 'kmh', distance_unit: 'km', time_zone: null, coordinate_format: 'decimal' };

describe('GET and PATCH /v1/users/me/preferences', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ config: { publicUrl: PUBLIC_URL } });
  });
  afterAll(() => t.close());

  it('answers the defaults until something changes, then every field with the changed ones', async () => {
    const user = await createUser(t.app);
    const api = t.as(user.token);
    expect((await api.get('/v1/users/me/preferences').expect(200)).body).toEqual({ data: DEFAULTS, _links: SELF });

    const sailor = await api
      .patch('/v1/users/me/preferences', { speed_unit: 'knots', distance_unit: 'nmi' })
      .expect(200);
    expect(sailor.body).toEqual({
      data: { ...DEFAULTS, speed_unit: 'knots', distance_unit: 'nmi' },
      _links: SELF,
    });
    const zoned = await api
      .patch('/v1/users/me/preferences', { time_zone: 'Europe/Berlin', coordinate_format: 'dm' })
      .expect(200);
    const changed = { speed_unit: 'knots', distance_unit: 'nmi', time_zone: 'Europe/Berlin', coordinate_format: 'dm' };
    expect(zoned.body).toEqual({ data: changed, _links: SELF });
    expect((await api.get('/v1/users/me/preferences').expect(200)).body.data).toEqual(changed);

    const browser = await api.patch('/v1/users/me/preferences', { time_zone: null, speed_unit: 'mph' }).expect(200);
    expect(browser.body.data).toEqual({ ...changed, time_zone: null, speed_unit: 'mph' });
    // Each user has their own.
    const other = await createUser(t.app);
    expect((await t.as(other.token).get('/v1/users/me/preferences').expect(200)).body.data).toEqual(DEFAULTS);
  });

  it('keeps a time zone as the server spells it, and refuses one it does not know, an offset and a bad unit', async () => {
    const api = t.as((await createUser(t.app)).token);
    const lower = await api.patch('/v1/users/me/preferences', { time_zone: 'america/new_york' }).expect(200);
    expect(lower.body.data.time_zone).toBe('America/New_York');
    const unknownZone = {
      error: 'BadRequest',
      message: 'time_zone is not an IANA time zone this server knows (e.g. Europe/Berlin)',
      code: 'preferences.unknown_time_zone',
    };
    for (const time_zone of ['Mars/Olympus_Mons', '+01:00', 'not a zone'])
      expect((await api.patch('/v1/users/me/preferences', { time_zone }).expect(400)).body).toEqual(unknownZone);
    const badUnit = await api
      .patch('/v1/users/me/preferences', unchecked({ speed_unit: 'furlongs_per_fortnight' }))
      .expect(400);
    expect(badUnit.body.code).toBe('request.validation');
    const nothing = await api.patch('/v1/users/me/preferences', unchecked({ theme: 'dark' })).expect(400);
    expect(nothing.body.code).toBe('request.validation');
    // None of the refused changes was made.
    expect((await api.get('/v1/users/me/preferences').expect(200)).body.data).toEqual({
      ...DEFAULTS,
      time_zone: 'America/New_York',
    });
  });

  it('lets an API key in only with preferences:read or preferences:write, and one without a user not at all', async () => {
    const owner = await createUser(t.app, ['role_user', 'role_developer']);
    const keyWith = async (scopes: string[]) =>
      t.as((await createApiKey(t.app, owner.token, { name: 'k', scopes })).key);
    const device = await keyWith(['gps:write_own']);
    expect((await device.get('/v1/users/me/preferences').expect(403)).body).toEqual(forbidden('preferences:read'));
    expect((await device.patch('/v1/users/me/preferences', { speed_unit: 'mph' }).expect(403)).body).toEqual(
      forbidden('preferences:write'),
    );
    const reader = await keyWith(['preferences:read']);
    expect((await reader.get('/v1/users/me/preferences').expect(200)).body.data).toEqual(DEFAULTS);
    expect((await reader.patch('/v1/users/me/preferences', { speed_unit: 'mph' }).expect(403)).body).toEqual(
      forbidden('preferences:write'),
    );
    const writer = await keyWith(['preferences:write']);
    const written = await writer.patch('/v1/users/me/preferences', { speed_unit: 'mph' }).expect(200);
    expect(written.body.data).toEqual({ ...DEFAULTS, speed_unit: 'mph' });
    expect((await t.as(owner.token).get('/v1/users/me/preferences').expect(200)).body.data.speed_unit).toBe('mph');

    const ownerless = t.as(await ownerlessKey(t, ['preferences:read']));
    expect((await ownerless.get('/v1/users/me/preferences').expect(403)).body).toEqual({
      error: 'Forbidden',
      message: 'This credential does not belong to a user',
      code: 'auth.user_required',
    });
    expect((await t.as(null).get('/v1/users/me/preferences').expect(401)).body).toEqual(UNAUTHORIZED);
  });
});
