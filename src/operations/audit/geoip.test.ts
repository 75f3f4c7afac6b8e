import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BERLIN, geoIpFile } from '../../../test/fakes/mmdb.js';
import { buildTestApp, createUser, type TestApp } from '../../../test/helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ config: { geoipDb: geoIpFile({ '203.0.113.0/24': BERLIN }) } });
});
afterAll(() => t.close());

describe('audit event locations with GEOIP_DB', () => {
  it('places an event by its address, and leaves the fields out where the database knows nothing', async () => {
    const user = await createUser(t.app);
    await t
      .as(null)
      .post('/v1/auth/login', { identifier: user.username, password: user.password }, { remoteAddress: '203.0.113.9' })
      .expect(200);

    const { events } = (
      await t
        .as(user.token)
        .get('/v1/users/me/audit', { query: { event_type: 'login' } })
        .expect(200)
    ).body;
    expect(events).toHaveLength(2);
    expect(events[0]).toMatchObject({
      ip_address: '203.0.113.9',
      country_code: 'DE',
      country_name: 'Germany',
      city: 'Berlin',
      region: 'Land Berlin',
    });
    // The first sign-in (createUser) came from 127.0.0.1, which no city database covers.
    expect(events[1]!.ip_address).toBe('127.0.0.1');
    for (const field of ['country_code', 'country_name', 'city', 'region']) expect(events[1]).not.toHaveProperty(field);
  });

  it("places an event an app reports for its end user by the end user's address", async () => {
    const user = await createUser(t.app);
    const response = await t
      .as(t.config.systemApiKey!)
      .post('/v1/internal/audit', { event_type: 'consent_granted', user_id: user.id, ip_address: '203.0.113.77' })
      .expect(201);
    expect(response.body).toMatchObject({ ip_address: '203.0.113.77', country_code: 'DE', city: 'Berlin' });
  });
});
