import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, buildTestApp, createApiKey, expectIdChecks, login, TEST_ADMIN, UNKNOWN_ID, type TestApp } from '../../../test/helpers.js';

describe('trip categories', () => {
  let t: TestApp;
  let admin: string;
  beforeAll(async () => {
    t = await buildTestApp();
    admin = await login(t.app, 'admin', TEST_ADMIN.password);
  });
  afterAll(() => t.close());

  const call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object, token = admin) =>
    t.app.inject({ method, url, headers: bearer(token), payload });
  const newCategory = async (body: Record<string, unknown> = {}) => (await call('POST', '/v1/trip-categories', { name: 'Cargo', ...body })).json().data;

  it('creates a category with defaults and reads it back', async () => {
    const response = await call('POST', '/v1/trip-categories', { name: 'Freight', description: 'heavy', color: '#1a2B3c', is_active: false });
    expect(response.statusCode).toBe(201);
    const category = response.json().data;
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
    expect((await call('GET', `/v1/trip-categories/${category.id}`)).json().data).toEqual(category);
  });

  it.each([
    [{}, "Body field 'name' is required", 'request.validation'],
    [{ name: 'x', color: 'red' }, `Body field 'color' must match pattern "^#[0-9a-fA-F]{6}$"`, 'request.validation'],
    [{ name: 'x', color: '#12345g' }, `Body field 'color' must match pattern "^#[0-9a-fA-F]{6}$"`, 'request.validation'],
    [{ name: 'x', sort_order: 1.5 }, "Body field 'sort_order' must be integer", 'request.validation'],
    [{ name: 'x', sort_order: '2' }, "Body field 'sort_order' must be integer", 'request.validation'],
    [{ name: 'x', parent_id: UNKNOWN_ID }, 'parent_id does not name an existing trip category', 'trip_category.unknown_parent'],
    [{ name: 'x', parent_id: 'cargo' }, `Body field 'parent_id' must match format "uuid"`, 'request.validation'],
  ])('rejects %j with 400', async (body, message, code) => {
    const response = await call('POST', '/v1/trip-categories', body);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ error: 'BadRequest', message, code });
  });

  it('lists every category as a bare array by sort_order, then name', async () => {
    const late = await newCategory({ name: 'A late', sort_order: 5 });
    const b = await newCategory({ name: 'B first', sort_order: -1 });
    const a = await newCategory({ name: 'A first', sort_order: -1 });
    for (let i = 0; i < 10; i++) await newCategory({ name: `filler ${i}` });
    const response = await call('GET', '/v1/trip-categories');
    expect(response.statusCode).toBe(200);
    const list = response.json();
    expect(Array.isArray(list)).toBe(true);
    expect(list.length).toBeGreaterThanOrEqual(13);
    expect(list.slice(0, 2).map((c: { id: string }) => c.id)).toEqual([a.id, b.id]);
    expect(list.at(-1).id).toBe(late.id);
  });

  it('keeps the hierarchy a tree', async () => {
    const root = await newCategory({ name: 'root' });
    const child = await newCategory({ name: 'child', parent_id: root.id });
    const grandchild = await newCategory({ name: 'grandchild', parent_id: child.id });
    expect(grandchild.parent_id).toBe(child.id);

    const own = await call('PATCH', `/v1/trip-categories/${root.id}`, { parent_id: root.id });
    expect(own.json()).toEqual({ error: 'BadRequest', message: 'A category cannot be its own parent', code: 'trip_category.own_parent' });
    const loop = await call('PATCH', `/v1/trip-categories/${root.id}`, { parent_id: grandchild.id });
    expect(loop.statusCode).toBe(400);
    expect(loop.json()).toEqual({ error: 'BadRequest', message: 'parent_id would make the category an ancestor of itself', code: 'trip_category.parent_cycle' });
    expect((await call('GET', `/v1/trip-categories/${root.id}`)).json().data.parent_id).toBeNull();
    const unknown = await call('PATCH', `/v1/trip-categories/${root.id}`, { parent_id: UNKNOWN_ID });
    expect(unknown.json()).toEqual({ error: 'BadRequest', message: 'parent_id does not name an existing trip category', code: 'trip_category.unknown_parent' });

    // Moving a subtree elsewhere, and back to the top level, is fine.
    const other = await newCategory({ name: 'other' });
    expect((await call('PATCH', `/v1/trip-categories/${child.id}`, { parent_id: other.id })).json().data.parent_id).toBe(other.id);
    expect((await call('PATCH', `/v1/trip-categories/${child.id}`, { parent_id: null })).json().data.parent_id).toBeNull();
  });

  it('keeps the hierarchy a tree however the ids are spelled', async () => {
    const root = await newCategory({ name: 'ROOT' });
    const child = await newCategory({ name: 'CHILD', parent_id: root.id });
    const own = await call('PATCH', `/v1/trip-categories/${root.id.toUpperCase()}`, { parent_id: root.id });
    expect(own.json()).toMatchObject({ code: 'trip_category.own_parent' });
    const loop = await call('PATCH', `/v1/trip-categories/${root.id.toUpperCase()}`, { parent_id: child.id });
    expect(loop.json()).toMatchObject({ code: 'trip_category.parent_cycle' });
    const loopUpper = await call('PATCH', `/v1/trip-categories/${root.id}`, { parent_id: child.id.toUpperCase() });
    expect(loopUpper.json()).toMatchObject({ code: 'trip_category.parent_cycle' });
    expect((await call('GET', `/v1/trip-categories/${root.id}`)).json().data.parent_id).toBeNull();
  });

  it('updates the fields sent and needs at least one', async () => {
    const category = await newCategory({ color: '#000000' });
    const response = await call('PATCH', `/v1/trip-categories/${category.id}`, { is_active: false, sort_order: 3 });
    expect(response.statusCode).toBe(200);
    expect(response.json().data).toMatchObject({ name: 'Cargo', color: '#000000', is_active: false, sort_order: 3 });
    for (const body of [{}, { colour: '#ffffff' }]) {
      const refused = await call('PATCH', `/v1/trip-categories/${category.id}`, body);
      expect(refused.statusCode).toBe(400);
      expect(refused.json()).toEqual({ error: 'BadRequest', message: 'Give at least one of: name, parent_id, description, color, sort_order, is_active', code: 'request.validation' });
    }
  });

  it('deletes a category; its children move to the top level', async () => {
    const parent = await newCategory();
    const child = await newCategory({ parent_id: parent.id });
    expect((await call('DELETE', `/v1/trip-categories/${parent.id}`)).statusCode).toBe(204);
    expect((await call('GET', `/v1/trip-categories/${parent.id}`)).statusCode).toBe(404);
    expect((await call('GET', `/v1/trip-categories/${child.id}`)).json().data.parent_id).toBeNull();
  });

  it('answers 404 for unknown ids and 400 for ids that are not UUIDs', () => expectIdChecks(t.app, admin, '/v1/trip-categories', { message: 'Trip category not found', code: 'trip_category.not_found' }));

  it('needs trip_categories:read, trip_categories:write and trip_categories:delete', async () => {
    const category = await newCategory();
    const reader = await createApiKey(t.app, admin, { name: 'category reader', scopes: ['trip_categories:read'] });
    const writer = await createApiKey(t.app, admin, { name: 'category writer', scopes: ['trip_categories:write'] });
    expect((await call('GET', '/v1/trip-categories', undefined, reader.key)).statusCode).toBe(200);
    expect((await call('POST', '/v1/trip-categories', { name: 'x' }, reader.key)).statusCode).toBe(403);
    expect((await call('PATCH', `/v1/trip-categories/${category.id}`, { name: 'y' }, writer.key)).statusCode).toBe(200);
    expect((await call('DELETE', `/v1/trip-categories/${category.id}`, undefined, writer.key)).statusCode).toBe(403);
    expect((await t.app.inject({ method: 'GET', url: '/v1/trip-categories' })).statusCode).toBe(401);
  });
});
