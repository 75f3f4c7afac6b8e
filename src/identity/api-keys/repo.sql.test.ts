import { expect, it } from 'vitest';
import { snapshotClock, sqlRecorder } from '../../../test/sql-snapshot.js';
import { createApiKeysRepo } from './repo.js';

/**
 * The SQL of the API-key credential lookup (the credential resolver's, on a cache miss) and of the use it
 * records, committed beside this file as repo.sql: a change of a query shows in review as a change of SQL.
 * `npx vitest run src/identity/api-keys/repo.sql.test.ts -u` writes it again (docs/development.md).
 */
it('matches the SQL committed in repo.sql', async () => {
  const sql = sqlRecorder();
  const repo = createApiKeysRepo(sql.db, snapshotClock);

  await sql.record(
    'credential lookup: the usable key of a hash (active, unexpired, its owner neither deleted nor banned)',
    () => repo.findUsable('a9e1a9e1a9e1a9e1a9e1a9e1a9e1a9e1a9e1a9e1a9e1a9e1a9e1a9e1a9e1a9e1'),
  );
  await sql.record('last use of a key (at most once a minute per key and process)', () =>
    repo.touch('66666666-6666-4666-8666-666666666666'),
  );

  await expect(sql.text()).toMatchFileSnapshot('./repo.sql');
});
