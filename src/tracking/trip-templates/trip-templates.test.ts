import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unchecked, type Client, type RequestBody } from '../../../test/client.js';
import {
  buildTestApp,
  createApiKey,
  expectIdChecks,
  login,
  TEST_ADMIN,
  UNKNOWN_ID,
  type TestApp,
} from '../../../test/helpers.js';

describe('trip templates', () => {
  let t: TestApp;
  let admin: string;
  let api: Client;
  beforeAll(async () => {
    t = await buildTestApp();
    admin = await login(t.app, 'admin', TEST_ADMIN.password);
    api = t.as(admin);
  });
  afterAll(() => t.close());

  const idOf = async (url: '/v1/trip-categories' | '/v1/locations' | '/v1/devices', body: { name: string }) =>
    (await api.post(url, body).expect(201)).body.data.id;
  const newTemplate = async (body: Partial<RequestBody<'post', '/v1/trip-templates'>> = {}) =>
    (await api.post('/v1/trip-templates', { name: 'Weekly run', ...body }).expect(201)).body.data;

  /** A template that refers to a category, two locations and a device. */
  async function fullTemplate() {
    const body = {
      name: 'Kiel to Fehmarn',
      description: 'coastal',
      category_id: await idOf('/v1/trip-categories', { name: 'Freight' }),
      origin_id: await idOf('/v1/locations', { name: 'Kiel' }),
      destination_id: await idOf('/v1/locations', { name: 'Fehmarn' }),
      device_id: await idOf('/v1/devices', { name: 'tracker' }),
      gps_logging_enabled: true,
      default_weight_kg: 800,
      notes: 'call ahead',
      tags: ['coast', 'weekly'],
    };
    const response = await api.post('/v1/trip-templates', body).expect(201);
    return { body, response };
  }

  it('creates a template with every field and reads it back', async () => {
    const { body, response } = await fullTemplate();
    const template = response.body.data;
    expect(template).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      ...body,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect((await api.get(`/v1/trip-templates/${template.id}`).expect(200)).body.data).toEqual(template);
  });

  it('defaults gps_logging_enabled to false and tags to empty', async () => {
    expect(await newTemplate()).toMatchObject({
      gps_logging_enabled: false,
      tags: [],
      category_id: null,
      default_weight_kg: null,
    });
  });

  it.each([
    [{}, "Body field 'name' is required", 'request.validation'],
    [
      { name: 'x', category_id: UNKNOWN_ID },
      'category_id does not name an existing trip category',
      'database.missing_reference',
    ],
    [
      { name: 'x', origin_id: UNKNOWN_ID },
      'origin_id does not name an existing location',
      'database.missing_reference',
    ],
    [
      { name: 'x', destination_id: UNKNOWN_ID },
      'destination_id does not name an existing location',
      'database.missing_reference',
    ],
    [{ name: 'x', device_id: UNKNOWN_ID }, 'device_id does not name an existing device', 'database.missing_reference'],
    [{ name: 'x', default_weight_kg: -1 }, "Body field 'default_weight_kg' must be >= 0", 'request.validation'],
    [{ name: 'x', tags: 'a' }, "Body field 'tags' must be array", 'request.validation'],
  ])('rejects %j with 400', async (body, message, code) => {
    const response = await api.post('/v1/trip-templates', unchecked(body)).expect(400);
    expect(response.body).toEqual({ error: 'BadRequest', message, code });
  });

  it('lists every template as a bare array by name', async () => {
    for (const name of ['Zulu', 'Alpha', 'Mike']) await newTemplate({ name });
    const response = await api.get('/v1/trip-templates').expect(200);
    const names = response.body.map((template: { name: string }) => template.name);
    expect(names).toEqual([...names].sort());
    expect(names).toEqual(expect.arrayContaining(['Alpha', 'Mike', 'Zulu']));
  });

  it('updates the fields sent; an empty body changes nothing', async () => {
    const template = await newTemplate({ notes: 'n' });
    const response = await api
      .patch(`/v1/trip-templates/${template.id}`, { tags: ['x'], default_weight_kg: 10 })
      .expect(200);
    const updated = response.body.data;
    expect(updated).toMatchObject({ name: 'Weekly run', notes: 'n', tags: ['x'], default_weight_kg: 10 });
    const empty = await api.patch(`/v1/trip-templates/${template.id}`, {}).expect(200);
    expect(empty.body.data).toEqual(updated);
  });

  it('creates a draft trip with every template value and the given weight', async () => {
    const { body, response } = await fullTemplate();
    const template = response.body.data;
    const created = await api
      .post(`/v1/trip-templates/${template.id}/create-trip`, unchecked({ weight_kg: 1250.5, name: 'ignored' }))
      .expect(201);
    const trip = created.body.data;
    const { default_weight_kg: _, ...copied } = body;
    expect(trip).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      ...copied,
      name: 'Kiel to Fehmarn (from template)',
      status: 'draft',
      weight_kg: 1250.5,
      start_latitude: null,
      start_longitude: null,
      end_latitude: null,
      end_longitude: null,
      started_at: null,
      ended_at: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect((await api.get(`/v1/trips/${trip.id}`).expect(200)).body.data).toEqual(trip);
  });

  it('needs weight_kg to create a trip, and an existing template', async () => {
    const template = await newTemplate();
    const missing = await api.post(`/v1/trip-templates/${template.id}/create-trip`, unchecked({}));
    expect(missing.body).toEqual({
      error: 'BadRequest',
      message: "Body field 'weight_kg' is required",
      code: 'request.validation',
    });
    const text = await api.post(`/v1/trip-templates/${template.id}/create-trip`, unchecked({ weight_kg: '5' }));
    expect(text.body).toEqual({
      error: 'BadRequest',
      message: "Body field 'weight_kg' must be number",
      code: 'request.validation',
    });
    const unknown = await api.post(`/v1/trip-templates/${UNKNOWN_ID}/create-trip`, { weight_kg: 5 }).expect(404);
    expect(unknown.body).toEqual({
      error: 'NotFound',
      message: 'Trip template not found',
      code: 'trip_template.not_found',
    });
  });

  it('deletes with 204; deleting what a template refers to only clears the reference', async () => {
    const { response } = await fullTemplate();
    const template = response.body.data;
    expect((await api.delete(`/v1/locations/${template.origin_id}`)).status).toBe(204);
    expect((await api.get(`/v1/trip-templates/${template.id}`).expect(200)).body.data.origin_id).toBeNull();
    expect((await api.delete(`/v1/trip-templates/${template.id}`)).status).toBe(204);
    expect((await api.get(`/v1/trip-templates/${template.id}`)).status).toBe(404);
  });

  it('answers 404 for unknown ids and 400 for ids that are not UUIDs', () =>
    expectIdChecks(t.app, admin, '/v1/trip-templates', {
      message: 'Trip template not found',
      code: 'trip_template.not_found',
    }));

  it('needs trips:read, trips:write and trips:delete', async () => {
    const template = await newTemplate();
    const reader = await createApiKey(t.app, admin, { name: 'template reader', scopes: ['trips:read'] });
    const writer = await createApiKey(t.app, admin, { name: 'template writer', scopes: ['trips:write'] });
    expect((await t.as(reader.key).get('/v1/trip-templates')).status).toBe(200);
    expect((await t.as(reader.key).post('/v1/trip-templates', { name: 'x' })).status).toBe(403);
    expect(
      (await t.as(reader.key).post(`/v1/trip-templates/${template.id}/create-trip`, { weight_kg: 1 })).status,
    ).toBe(403);
    expect(
      (await t.as(writer.key).post(`/v1/trip-templates/${template.id}/create-trip`, { weight_kg: 1 })).status,
    ).toBe(201);
    expect((await t.as(writer.key).delete(`/v1/trip-templates/${template.id}`)).status).toBe(403);
    expect((await t.as(null).get('/v1/trip-templates')).status).toBe(401);
  });
});
