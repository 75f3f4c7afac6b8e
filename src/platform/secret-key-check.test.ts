import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openTestDatabase } from '../../test/helpers.js';
import type { Database } from './db/database.js';
import { createSecretBox, SecretKeyMismatchError, verifySecretKey } from './secret-box.js';

describe('the secret key check at start-up', () => {
  let database: Database;
  beforeEach(async () => {
    database = await openTestDatabase();
  });
  afterEach(() => database.close());

  it('passes every start with the key the database first saw, and stops one with another key, naming it', async () => {
    const first = createSecretBox('the key this database was sealed with', '/nonexistent');
    await verifySecretKey(database.db, first, 'SECRET_KEY');
    await verifySecretKey(
      database.db,
      createSecretBox('the key this database was sealed with', '/nonexistent'),
      'SECRET_KEY',
    );

    const other = createSecretBox('another key set when moving to several nodes', '/nonexistent');
    const start = verifySecretKey(database.db, other, 'SECRET_KEY');
    await expect(start).rejects.toThrow(SecretKeyMismatchError);
    await expect(start).rejects.toThrow(/^SECRET_KEY is not the key this database's secrets were sealed with/);
    // The check itself stays as the first key wrote it.
    await verifySecretKey(database.db, first, 'SECRET_KEY');
  });
});
