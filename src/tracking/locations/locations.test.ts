import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unchecked, type Client } from '../../../test/client.js';
import {
  buildTestApp,
  createApiKey,
  expectIdChecks,
  expectPermissionChecks,
  forbidden,
  login,
  TEST_ADMIN,
  UNKNOWN_ID,
  type TestApp,
} from '../../../test/helpers.js';

describe('locations', () => {
  let t: TestApp;
  let admin: string;
  let api: Client;
  beforeAll(async () => {
    t = await buildTestApp();
    admin = await login(t.app, 'admin', TEST_ADMIN.password);
    api = t.as(admin);
  });
  afterAll(() => t.close());

  const newLocation = async (body: Record<string, unknown> = {}) =>
    (await api.post('/v1/locations', { name: 'Harbour', ...body }).expect(201)).body.data;
  const countNamed = async (name: string) =>
    (await t.database.db.selectFrom('locations').select('id').where('name', '=', name).execute()).length;

  it('creates a location with its contacts and reads it back', async () => {
    const body = {
      name: 'Kiel port',
      street: 'Kai 1',
      zip: '24103',
      city: 'Kiel',
      country: 'DE',
      latitude: 54.32,
      longitude: 10.14,
      notes: 'gate 3',
    };
    const response = await api
      .post('/v1/locations', {
        ...body,
        contacts: [{ name: 'Bea', phone: '+49 1', email: 'bea@example.org', role: 'harbour master' }, { name: 'Al' }],
      })
      .expect(201);
    const location = response.body.data;
    const contact = {
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      location_id: location.id,
      created_at: expect.any(String),
    };
    expect(location).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      ...body,
      is_active: true,
      created_at: expect.any(String),
      updated_at: expect.any(String),
      contacts: [
        { ...contact, name: 'Al', phone: null, email: null, role: null },
        { ...contact, name: 'Bea', phone: '+49 1', email: 'bea@example.org', role: 'harbour master' },
      ],
    });
    expect((await api.get(`/v1/locations/${location.id}`)).body).toEqual({
      data: location,
      _links: { self: `http://localhost/v1/locations/${location.id}` },
    });
  });

  it('creates nothing when a nested contact is invalid', async () => {
    const response = await api
      .post('/v1/locations', unchecked({ name: 'Half written', contacts: [{ name: 'ok' }, { phone: '1' }] }))
      .expect(400);
    expect(response.body).toEqual({
      error: 'BadRequest',
      message: "Body field 'contacts.1.name' is required",
      code: 'request.validation',
    });
    expect(await countNamed('Half written')).toBe(0);
    // Past the schema, the database refuses the second contact: the location insert is rolled back with it.
    await expect(
      t.app.services.locations.create({
        name: 'Rolled back',
        contacts: [{ name: 'ok' }, { name: null as unknown as string }],
      }),
    ).rejects.toThrow();
    expect(await countNamed('Rolled back')).toBe(0);
  });

  it.each([
    [{}, "Body field 'name' is required", 'request.validation'],
    [{ name: '' }, "Body field 'name' must NOT have fewer than 1 characters", 'request.validation'],
    [{ name: 'x', latitude: 91 }, "Body field 'latitude' must be <= 90", 'request.validation'],
    [{ name: 'x', longitude: -181 }, "Body field 'longitude' must be >= -180", 'request.validation'],
    [
      { name: 'x', country: 'Germany' },
      `Body field 'country' must match pattern "^[A-Za-z]{2,3}$"`,
      'request.validation',
    ],
    [
      { name: 'x', contacts: [{ name: 'c', email: 'nope' }] },
      `Body field 'contacts.0.email' must match format "email"`,
      'request.validation',
    ],
  ])('rejects %j with 400', async (body, message, code) => {
    const response = await api.post('/v1/locations', unchecked(body)).expect(400);
    expect(response.body).toEqual({ error: 'BadRequest', message, code });
  });

  it('lists by name with a default page size of 10', async () => {
    for (const name of ['zz 3', 'zz 1', 'zz 2']) await newLocation({ name });
    for (let i = 0; i < 8; i++) await newLocation({ name: `aa ${i}` });
    const body = (await api.get('/v1/locations').expect(200)).body;
    expect(body.data).toHaveLength(10);
    const names = body.data.map((l: { name: string }) => l.name);
    expect(names).toEqual([...names].sort());
    expect(body.data[0]).not.toHaveProperty('contacts');
    expect(body.pagination).toMatchObject({ page: 1, limit: 10 });
    expect(body._links.next).toContain('page=2');
    const last = (await api.get(`/v1/locations?page=${body.pagination.total_pages}`).expect(200)).body.data;
    expect(last.at(-1)!.name).toBe('zz 3');
  });

  it('updates the fields sent, needs at least one, and leaves the contacts alone', async () => {
    const location = await newLocation({ city: 'Kiel', contacts: [{ name: 'Bea' }] });
    const response = await api
      .patch(`/v1/locations/${location.id}`, { is_active: false, notes: 'closed', contacts: [] })
      .expect(200);
    expect(response.body.data).toMatchObject({
      city: 'Kiel',
      is_active: false,
      notes: 'closed',
      contacts: [{ name: 'Bea' }],
    });
    // Fields the route does not know do not count: contacts have their own routes.
    for (const body of [{}, { contacts: [] }, { nickname: 'x' }]) {
      const refused = await api.patch(`/v1/locations/${location.id}`, body).expect(400);
      expect(refused.body).toEqual({
        error: 'BadRequest',
        message: 'Give at least one of: name, street, zip, city, country, latitude, longitude, notes, is_active',
        code: 'request.validation',
      });
    }
  });

  it('deletes a location and its contacts', async () => {
    const location = await newLocation({ contacts: [{ name: 'Bea' }] });
    expect((await api.delete(`/v1/locations/${location.id}`)).status).toBe(204);
    expect((await api.get(`/v1/locations/${location.id}`)).status).toBe(404);
    expect(
      await t.database.db.selectFrom('location_contacts').select('id').where('location_id', '=', location.id).execute(),
    ).toEqual([]);
  });

  describe('contacts', () => {
    it('adds, changes and removes a contact', async () => {
      const location = await newLocation();
      const created = await api
        .post(`/v1/locations/${location.id}/contacts`, unchecked({ name: 'Cy', role: 'crane', extra: 'dropped' }))
        .expect(201);
      const contact = created.body.data;
      expect(contact).toEqual({
        id: expect.any(String),
        location_id: location.id,
        name: 'Cy',
        phone: null,
        email: null,
        role: 'crane',
        created_at: expect.any(String),
      });

      const changed = await api
        .patch(`/v1/locations/${location.id}/contacts/${contact.id}`, { phone: '+49 2' })
        .expect(200);
      expect(changed.body.data).toEqual({ ...contact, phone: '+49 2' });
      for (const body of [{}, { location_id: location.id }]) {
        expect((await api.patch(`/v1/locations/${location.id}/contacts/${contact.id}`, body)).body).toEqual({
          error: 'BadRequest',
          message: 'Give at least one of: name, phone, email, role',
          code: 'request.validation',
        });
      }

      expect((await api.delete(`/v1/locations/${location.id}/contacts/${contact.id}`)).status).toBe(204);
      expect((await api.get(`/v1/locations/${location.id}`).expect(200)).body.data.contacts).toEqual([]);
    });

    it('answers 404 for a contact of another location, and for an unknown location', async () => {
      const owner = await newLocation({ contacts: [{ name: 'Di' }] });
      const other = await newLocation();
      const contactId = owner.contacts[0]!.id;
      for (const [method, payload] of [
        ['PATCH', { name: 'x' }],
        ['DELETE', undefined],
      ] as const) {
        const response = await api.raw({ method, url: `/v1/locations/${other.id}/contacts/${contactId}`, payload });
        expect(response.status).toBe(404);
        expect(response.body).toEqual({
          error: 'NotFound',
          message: 'Contact not found',
          code: 'location.contact_not_found',
        });
      }
      const missing = await api.post(`/v1/locations/${UNKNOWN_ID}/contacts`, { name: 'x' });
      expect(missing.body).toEqual({ error: 'NotFound', message: 'Location not found', code: 'location.not_found' });
      expect((await api.get(`/v1/locations/${owner.id}`).expect(200)).body.data.contacts).toHaveLength(1);
      expect((await api.delete(`/v1/locations/${owner.id}/contacts/not-a-uuid`)).status).toBe(400);
    });

    it('requires a contact name', async () => {
      const location = await newLocation();
      const response = await api.post(`/v1/locations/${location.id}/contacts`, unchecked({ phone: '1' }));
      expect(response.body).toEqual({
        error: 'BadRequest',
        message: "Body field 'name' is required",
        code: 'request.validation',
      });
    });
  });

  it('answers 404 for unknown ids and 400 for ids that are not UUIDs', () =>
    expectIdChecks(t.app, admin, '/v1/locations', { message: 'Location not found', code: 'location.not_found' }));

  it('needs locations:read, locations:write and locations:delete', async () => {
    const location = await newLocation();
    const reader = await createApiKey(t.app, admin, { name: 'location reader', scopes: ['locations:read'] });
    const writer = await createApiKey(t.app, admin, { name: 'location writer', scopes: ['locations:write'] });
    expect((await t.as(reader.key).get('/v1/locations')).status).toBe(200);
    expect((await t.as(reader.key).post('/v1/locations', { name: 'x' })).status).toBe(403);
    expect((await t.as(reader.key).post(`/v1/locations/${location.id}/contacts`, { name: 'x' })).status).toBe(403);
    expect((await t.as(writer.key).delete(`/v1/locations/${location.id}`)).body).toEqual(forbidden('locations:delete'));
    await expectPermissionChecks(t.app, admin, [
      { method: 'GET', url: '/v1/locations', permission: 'locations:read' },
      { method: 'GET', url: `/v1/locations/${location.id}`, permission: 'locations:read' },
      { method: 'POST', url: '/v1/locations', permission: 'locations:write', payload: {} },
      { method: 'PATCH', url: `/v1/locations/${location.id}`, permission: 'locations:write', payload: {} },
      { method: 'DELETE', url: `/v1/locations/${UNKNOWN_ID}`, permission: 'locations:delete' },
      { method: 'POST', url: `/v1/locations/${location.id}/contacts`, permission: 'locations:write', payload: {} },
      {
        method: 'PATCH',
        url: `/v1/locations/${location.id}/contacts/${UNKNOWN_ID}`,
        permission: 'locations:write',
        payload: { name: 'x' },
      },
      { method: 'DELETE', url: `/v1/locations/${location.id}/contacts/${UNKNOWN_ID}`, permission: 'locations:write' },
    ]);
    const anonymous = await t.as(null).get('/v1/locations');
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toEqual({
      error: 'Unauthorized',
      message: 'Invalid or missing authentication token',
      code: 'auth.unauthorized',
    });
  });
});
