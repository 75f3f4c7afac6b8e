import { expect, it } from 'vitest';
import { snapshotClock, sqlRecorder } from '../../../test/sql-snapshot.js';
import { createSessionStore } from './store.js';

/**
 * The SQL of the session credential lookup (the credential resolver's, on a cache miss), committed beside this
 * file as store.sql: a change of the query shows in review as a change of SQL.
 * `npx vitest run src/identity/sessions/store.sql.test.ts -u` writes it again (docs/development.md).
 */
it('matches the SQL committed in store.sql', async () => {
  const sql = sqlRecorder();
  const store = createSessionStore({ db: sql.db, clock: snapshotClock } as Parameters<typeof createSessionStore>[0]);

  await sql.record('credential lookup: the live session of a token hash, its user neither deleted nor banned', () =>
    store.lookup('5e55105e55105e55105e55105e55105e55105e55105e55105e55105e55105e55'),
  );

  await expect(sql.text()).toMatchFileSnapshot('./store.sql');
});
