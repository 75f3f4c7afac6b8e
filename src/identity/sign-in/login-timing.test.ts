import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createUser, type TestApp } from '../../../test/helpers.js';

/**
 * A wrong password must take as long for a user that does not exist as for one that does, or the
 * response time tells which identifiers are accounts. (A locked identifier answers 429 at once, but
 * identifiers lock alike whether or not they name an account, so that tells nothing either.)
 */
describe('sign-in timing', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(() => t.close());

  async function timedWrongLogin(identifier: string): Promise<number> {
    const started = performance.now();
    await t.as(null).post('/v1/auth/login', { identifier, password: 'not the password' }).expect(401);
    return performance.now() - started;
  }

  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

  it('spends a password hash on an unknown identifier too: the medians of both stay close', async () => {
    const accounts = [await createUser(t.app), await createUser(t.app)];
    const known: number[] = [];
    const unknown: number[] = [];
    // Alternating, so drift of the machine's speed hits both alike; each user is named by username and by
    // email in turn, each account under the 10 failures that lock it.
    for (let i = 0; i < 12; i++) {
      const user = accounts[Math.floor(i / 2) % 2]!;
      known.push(await timedWrongLogin(i % 2 ? user.username : `${user.username}@example.org`));
      unknown.push(await timedWrongLogin(`nobody_${i}_${accounts[0]!.username}`.slice(0, 30)));
    }
    // Without the hash, an unknown identifier answers in a small fraction of the time (a lookup, no
    // argon2id); the bounds are wide because the test shares the machine with others.
    const [k, u] = [median(known), median(unknown)];
    expect(u).toBeGreaterThan(k * 0.4);
    expect(u).toBeLessThan(k * 2.5);
  });
});
