import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createUser, login, TEST_ADMIN, TEST_SYSTEM_KEY, type TestApp } from '../../../test/helpers.js';

/**
 * Requests that race each other for the same name or the same user. Whichever way the race goes (the
 * service's own check, or the database's unique index behind it), the answers are the interface's.
 */
describe('users under concurrent requests', () => {
  let t: TestApp;
  let admin: string;
  beforeAll(async () => {
    t = await buildTestApp();
    admin = await login(t.app, TEST_ADMIN.username, TEST_ADMIN.password);
  });
  afterAll(() => t.close());

  it('gives a name claimed by several users at once to one of them; the others get the spec’s 409', async () => {
    const claimants = await Promise.all(Array.from({ length: 6 }, () => createUser(t.app)));
    const name = `wanted_${Date.now() % 1_000_000}`;
    const answers = await Promise.all(
      claimants.map((user) => t.as(admin).patch(`/v1/users/${user.id}/username`, { username: name })),
    );
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(1);
    for (const refused of answers.filter((answer) => answer.status !== 200)) {
      expect({ status: refused.status, body: refused.body }).toEqual({
        status: 409,
        body: { error: 'Conflict', message: 'Username is already taken', code: 'user.username_taken' },
      });
    }
  });

  it('answers an OAuth sign-in racing the deletion of its user with 403 or a sign-in, never 500', async () => {
    const slug = `race${Date.now() % 100_000}`;
    await t.database.db.insertInto('platforms').values({ name: 'Race', slug, is_oauth: true }).execute();
    for (let round = 0; round < 5; round++) {
      const identity = {
        email: null,
        name: `Racer ${round}`,
        oauthProvider: slug,
        oauthProviderId: `racer-${round}`,
        image: null,
      };
      const signIn = () => t.as(TEST_SYSTEM_KEY).post('/v1/users/oauth', identity);
      const user = (await signIn().expect(200)).body.data;
      const [deleted, again] = await Promise.all([t.as(admin).delete(`/v1/users/${user.id}`), signIn()]);
      expect(deleted.status).toBe(204);
      expect([200, 403]).toContain(again.status);
      if (again.status === 403) {
        expect(again.body).toEqual({
          error: 'Forbidden',
          message: 'This user account has been deleted',
          code: 'user.deleted',
        });
      }
    }
  });
});
