import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, buildTestApp, createApiKey, expectIdChecks, login, TEST_ADMIN, UNKNOWN_ID, type TestApp } from '../../../test/helpers.js';

describe('trip templates', () => {
  let t: TestApp;
  let admin: string;
  beforeAll(async () => {
    t = await buildTestApp();
    admin = await login(t.app, 'admin', TEST_ADMIN.password);
  });
  afterAll(() => t.close());

  const call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object, token = admin) =>
    t.app.inject({ method, url, headers: bearer(token), payload });
  const idOf = async (url: string, body: object) => (await call('POST', url, body)).json().data.id as string;
  const newTemplate = async (body: Record<string, unknown> = {}) => (await call('POST', '/v1/trip-templates', { name: 'Weekly run', ...body })).json().data;

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
    const response = await call('POST', '/v1/trip-templates', body);
    return { body, response };
  }

  it('creates a template with every field and reads it back', async () => {
    const { body, response } = await fullTemplate();
    expect(response.statusCode).toBe(201);
    const template = response.json().data;
    expect(template).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), ...body, created_at: expect.any(String), updated_at: expect.any(String) });
    expect((await call('GET', `/v1/trip-templates/${template.id}`)).json().data).toEqual(template);
  });

  it('defaults gps_logging_enabled to false and tags to empty', async () => {
    expect(await newTemplate()).toMatchObject({ gps_logging_enabled: false, tags: [], category_id: null, default_weight_kg: null });
  });

  it.each([
    [{}, "Body field 'name' is required", 'request.validation'],
    [{ name: 'x', category_id: UNKNOWN_ID }, 'category_id does not name an existing trip category', 'database.missing_reference'],
    [{ name: 'x', origin_id: UNKNOWN_ID }, 'origin_id does not name an existing location', 'database.missing_reference'],
    [{ name: 'x', destination_id: UNKNOWN_ID }, 'destination_id does not name an existing location', 'database.missing_reference'],
    [{ name: 'x', device_id: UNKNOWN_ID }, 'device_id does not name an existing device', 'database.missing_reference'],
    [{ name: 'x', default_weight_kg: -1 }, "Body field 'default_weight_kg' must be >= 0", 'request.validation'],
    [{ name: 'x', tags: 'a' }, "Body field 'tags' must be array", 'request.validation'],
  ])('rejects %j with 400', async (body, message, code) => {
    const response = await call('POST', '/v1/trip-templates', body);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ error: 'BadRequest', message, code });
  });

  it('lists every template as a bare array by name', async () => {
    for (const name of ['Zulu', 'Alpha', 'Mike']) await newTemplate({ name });
    const response = await call('GET', '/v1/trip-templates');
    expect(response.statusCode).toBe(200);
    const names = response.json().map((template: { name: string }) => template.name);
    expect(names).toEqual([...names].sort());
    expect(names).toEqual(expect.arrayContaining(['Alpha', 'Mike', 'Zulu']));
  });

  it('updates the fields sent; an empty body changes nothing', async () => {
    const template = await newTemplate({ notes: 'n' });
    const response = await call('PATCH', `/v1/trip-templates/${template.id}`, { tags: ['x'], default_weight_kg: 10 });
    expect(response.statusCode).toBe(200);
    const updated = response.json().data;
    expect(updated).toMatchObject({ name: 'Weekly run', notes: 'n', tags: ['x'], default_weight_kg: 10 });
    const empty = await call('PATCH', `/v1/trip-templates/${template.id}`, {});
    expect(empty.statusCode).toBe(200);
    expect(empty.json().data).toEqual(updated);
  });

  it('creates a draft trip with every template value and the given weight', async () => {
    const { body, response } = await fullTemplate();
    const template = response.json().data;
    const created = await call('POST', `/v1/trip-templates/${template.id}/create-trip`, { weight_kg: 1250.5, name: 'ignored' });
    expect(created.statusCode).toBe(201);
    const trip = created.json().data;
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
    expect((await call('GET', `/v1/trips/${trip.id}`)).json().data).toEqual(trip);
  });

  it('needs weight_kg to create a trip, and an existing template', async () => {
    const template = await newTemplate();
    const missing = await call('POST', `/v1/trip-templates/${template.id}/create-trip`, {});
    expect(missing.json()).toEqual({ error: 'BadRequest', message: "Body field 'weight_kg' is required", code: 'request.validation' });
    const text = await call('POST', `/v1/trip-templates/${template.id}/create-trip`, { weight_kg: '5' });
    expect(text.json()).toEqual({ error: 'BadRequest', message: "Body field 'weight_kg' must be number", code: 'request.validation' });
    const unknown = await call('POST', `/v1/trip-templates/${UNKNOWN_ID}/create-trip`, { weight_kg: 5 });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ error: 'NotFound', message: 'Trip template not found', code: 'trip_template.not_found' });
  });

  it('deletes with 204; deleting what a template refers to only clears the reference', async () => {
    const { response } = await fullTemplate();
    const template = response.json().data;
    expect((await call('DELETE', `/v1/locations/${template.origin_id}`)).statusCode).toBe(204);
    expect((await call('GET', `/v1/trip-templates/${template.id}`)).json().data.origin_id).toBeNull();
    expect((await call('DELETE', `/v1/trip-templates/${template.id}`)).statusCode).toBe(204);
    expect((await call('GET', `/v1/trip-templates/${template.id}`)).statusCode).toBe(404);
  });

  it('answers 404 for unknown ids and 400 for ids that are not UUIDs', () => expectIdChecks(t.app, admin, '/v1/trip-templates', { message: 'Trip template not found', code: 'trip_template.not_found' }));

  it('needs trips:read, trips:write and trips:delete', async () => {
    const template = await newTemplate();
    const reader = await createApiKey(t.app, admin, { name: 'template reader', scopes: ['trips:read'] });
    const writer = await createApiKey(t.app, admin, { name: 'template writer', scopes: ['trips:write'] });
    expect((await call('GET', '/v1/trip-templates', undefined, reader.key)).statusCode).toBe(200);
    expect((await call('POST', '/v1/trip-templates', { name: 'x' }, reader.key)).statusCode).toBe(403);
    expect((await call('POST', `/v1/trip-templates/${template.id}/create-trip`, { weight_kg: 1 }, reader.key)).statusCode).toBe(403);
    expect((await call('POST', `/v1/trip-templates/${template.id}/create-trip`, { weight_kg: 1 }, writer.key)).statusCode).toBe(201);
    expect((await call('DELETE', `/v1/trip-templates/${template.id}`, undefined, writer.key)).statusCode).toBe(403);
    expect((await t.app.inject({ method: 'GET', url: '/v1/trip-templates' })).statusCode).toBe(401);
  });
});
