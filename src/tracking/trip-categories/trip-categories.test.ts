import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unchecked, type Client } from '../../../test/client.js';
import {
  buildTestApp,
  createApiKey,
  expectIdChecks,
  login,
  TEST_ADMIN,
  UNKNOWN_ID,
  type TestApp,
} from '../../../test/helpers.js';

describe('trip categories', () => {
  let t: TestApp;
  let admin: string;
  let api: Client;
  beforeAll(async () => {
    t = await buildTestApp();
    admin = await login(t.app, 'admin', TEST_ADMIN.password);
    api = t.as(admin);
  });
  afterAll(() => t.close());

  const newCategory = async (body: Record<string, unknown> = {}) =>
    (await api.post('/v1/trip-categories', { name: 'Cargo', ...body }).expect(201)).body.data;

  it('creates a category with defaults and reads it back', async () => {
    const response = await api
      .post(
        '/v1/trip-categories',
        unchecked({ name: 'Freight', description: 'heavy', color: '#1a2B3c', is_active: false }),
      )
      .expect(201);
    const category = response.body.data;
    expect(category).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      parent_id: null,
      name: 'Freight',
      description: 'heavy',
      color: '#1a2B3c',
      is_active: true, // not a create field: dropped
      sort_order: 0,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect((await api.get(`/v1/trip-categories/${category.id}`).expect(200)).body.data).toEqual(category);
  });

  it.each([
    [{}, "Body field 'name' is required", 'request.validation'],
    [{ name: 'x', color: 'red' }, `Body field 'color' must match pattern "^#[0-9a-fA-F]{6}$"`, 'request.validation'],
    [
      { name: 'x', color: '#12345g' },
      `Body field 'color' must match pattern "^#[0-9a-fA-F]{6}$"`,
      'request.validation',
    ],
    [{ name: 'x', sort_order: 1.5 }, "Body field 'sort_order' must be integer", 'request.validation'],
    [{ name: 'x', sort_order: '2' }, "Body field 'sort_order' must be integer", 'request.validation'],
    [
      { name: 'x', parent_id: UNKNOWN_ID },
      'parent_id does not name an existing trip category',
      'trip_category.unknown_parent',
    ],
    [{ name: 'x', parent_id: 'cargo' }, `Body field 'parent_id' must match format "uuid"`, 'request.validation'],
  ])('rejects %j with 400', async (body, message, code) => {
    const response = await api.post('/v1/trip-categories', unchecked(body)).expect(400);
    expect(response.body).toEqual({ error: 'BadRequest', message, code });
  });

  it('lists every category as a bare array by sort_order, then name', async () => {
    const late = await newCategory({ name: 'A late', sort_order: 5 });
    const b = await newCategory({ name: 'B first', sort_order: -1 });
    const a = await newCategory({ name: 'A first', sort_order: -1 });
    for (let i = 0; i < 10; i++) await newCategory({ name: `filler ${i}` });
    const response = await api.get('/v1/trip-categories').expect(200);
    const list = response.body;
    expect(Array.isArray(list)).toBe(true);
    expect(list.length).toBeGreaterThanOrEqual(13);
    expect(list.slice(0, 2).map((c: { id: string }) => c.id)).toEqual([a.id, b.id]);
    expect(list.at(-1)!.id).toBe(late.id);
  });

  it('keeps the hierarchy a tree', async () => {
    const root = await newCategory({ name: 'root' });
    const child = await newCategory({ name: 'child', parent_id: root.id });
    const grandchild = await newCategory({ name: 'grandchild', parent_id: child.id });
    expect(grandchild.parent_id).toBe(child.id);

    const own = await api.patch(`/v1/trip-categories/${root.id}`, { parent_id: root.id });
    expect(own.body).toEqual({
      error: 'BadRequest',
      message: 'A category cannot be its own parent',
      code: 'trip_category.own_parent',
    });
    const loop = await api.patch(`/v1/trip-categories/${root.id}`, { parent_id: grandchild.id }).expect(400);
    expect(loop.body).toEqual({
      error: 'BadRequest',
      message: 'parent_id would make the category an ancestor of itself',
      code: 'trip_category.parent_cycle',
    });
    expect((await api.get(`/v1/trip-categories/${root.id}`).expect(200)).body.data.parent_id).toBeNull();
    const unknown = await api.patch(`/v1/trip-categories/${root.id}`, { parent_id: UNKNOWN_ID });
    expect(unknown.body).toEqual({
      error: 'BadRequest',
      message: 'parent_id does not name an existing trip category',
      code: 'trip_category.unknown_parent',
    });

    // Moving a subtree elsewhere, and back to the top level, is fine.
    const other = await newCategory({ name: 'other' });
    expect(
      (await api.patch(`/v1/trip-categories/${child.id}`, { parent_id: other.id }).expect(200)).body.data.parent_id,
    ).toBe(other.id);
    expect(
      (await api.patch(`/v1/trip-categories/${child.id}`, { parent_id: null }).expect(200)).body.data.parent_id,
    ).toBeNull();
  });

  it('keeps the hierarchy a tree however the ids are spelled', async () => {
    const root = await newCategory({ name: 'ROOT' });
    const child = await newCategory({ name: 'CHILD', parent_id: root.id });
    const own = await api.patch(`/v1/trip-categories/${root.id.toUpperCase()}`, { parent_id: root.id });
    expect(own.body).toMatchObject({ code: 'trip_category.own_parent' });
    const loop = await api.patch(`/v1/trip-categories/${root.id.toUpperCase()}`, { parent_id: child.id });
    expect(loop.body).toMatchObject({ code: 'trip_category.parent_cycle' });
    const loopUpper = await api.patch(`/v1/trip-categories/${root.id}`, { parent_id: child.id.toUpperCase() });
    expect(loopUpper.body).toMatchObject({ code: 'trip_category.parent_cycle' });
    expect((await api.get(`/v1/trip-categories/${root.id}`).expect(200)).body.data.parent_id).toBeNull();
  });

  it('updates the fields sent and needs at least one', async () => {
    const category = await newCategory({ color: '#000000' });
    const response = await api
      .patch(`/v1/trip-categories/${category.id}`, { is_active: false, sort_order: 3 })
      .expect(200);
    expect(response.body.data).toMatchObject({ name: 'Cargo', color: '#000000', is_active: false, sort_order: 3 });
    for (const body of [{}, { colour: '#ffffff' }]) {
      const refused = await api.patch(`/v1/trip-categories/${category.id}`, body).expect(400);
      expect(refused.body).toEqual({
        error: 'BadRequest',
        message: 'Give at least one of: name, parent_id, description, color, sort_order, is_active',
        code: 'request.validation',
      });
    }
  });

  it('deletes a category; its children move to the top level', async () => {
    const parent = await newCategory();
    const child = await newCategory({ parent_id: parent.id });
    expect((await api.delete(`/v1/trip-categories/${parent.id}`)).status).toBe(204);
    expect((await api.get(`/v1/trip-categories/${parent.id}`)).status).toBe(404);
    expect((await api.get(`/v1/trip-categories/${child.id}`).expect(200)).body.data.parent_id).toBeNull();
  });

  it('answers 404 for unknown ids and 400 for ids that are not UUIDs', () =>
    expectIdChecks(t.app, admin, '/v1/trip-categories', {
      message: 'Trip category not found',
      code: 'trip_category.not_found',
    }));

  it('needs trip_categories:read, trip_categories:write and trip_categories:delete', async () => {
    const category = await newCategory();
    const reader = await createApiKey(t.app, admin, { name: 'category reader', scopes: ['trip_categories:read'] });
    const writer = await createApiKey(t.app, admin, { name: 'category writer', scopes: ['trip_categories:write'] });
    expect((await t.as(reader.key).get('/v1/trip-categories')).status).toBe(200);
    expect((await t.as(reader.key).post('/v1/trip-categories', { name: 'x' })).status).toBe(403);
    expect((await t.as(writer.key).patch(`/v1/trip-categories/${category.id}`, { name: 'y' })).status).toBe(200);
    expect((await t.as(writer.key).delete(`/v1/trip-categories/${category.id}`)).status).toBe(403);
    expect((await t.as(null).get('/v1/trip-categories')).status).toBe(401);
  });
});
