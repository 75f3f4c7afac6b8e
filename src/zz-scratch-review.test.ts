import { sql } from 'kysely';
import { describe, it } from 'vitest';
import { buildTestApp } from '../test/helpers.js';

describe('scratch', () => {
  it('unexpected DB error logs params', async () => {
    const t = await buildTestApp({
      captureLogs: true,
      extraRoutes: async (app) => {
        app.get('/probe', async () => {
          await sql`select 1/0 where ${'ses_SUPERSECRET'}::text is not null`.execute(app.database.db);
          return {};
        });
      },
    });
    const r = await t.app.inject({ method: 'GET', url: '/probe' });
    console.log(r.statusCode, JSON.stringify(t.logs().filter((l) => l.msg === 'unexpected error')).slice(0, 600));
    await t.close();
  });
});
