import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDatabase, planOf } from '../../../test/helpers.js';
import type { Database } from '../../platform/db/database.js';
import { passwordLoginQuery } from './repo.js';

/**
 * A sign-in must find its user by index probes, whether the identifier is a username, an address or
 * nothing known: a scan would make the lookup of a real account measurably slower than that of an
 * unknown name, which tells them apart. Sequential scans are priced out (a small test table would
 * rightly prefer them); the plan must then need none.
 */
describe('sign-in query plan', () => {
  let database: Database;
  beforeAll(async () => {
    database = await openTestDatabase();
  });
  afterAll(() => database.close());

  it.each(['someone', 'someone@example.org'])('finds the user named %s through indexes only', async (identifier) => {
    const plan = await planOf(database, passwordLoginQuery(database.db, identifier), ['enable_seqscan']);
    expect(plan).not.toContain('Seq Scan');
    expect(plan).toContain('Index Cond: (username = ');
    // The address is looked up with both columns of the account's unique key, not by scanning its index.
    expect(plan).toMatch(/Index Cond: \(\(platform_id = .+\) AND \(platform_user_id = /);
  });
});
