import type { FastifyRequest } from 'fastify';
import { expect, it } from 'vitest';
import { sqlRecorder } from '../../../test/sql-snapshot.js';
import { createAuditRepo, type AuditFilters } from './repo.js';
import { createAuditWriter } from './writer.js';

/**
 * The SQL of the activity log (its writer, the lists and their filters, the reports), committed beside this file
 * as repo.sql: a change of a query shows in review as a change of SQL.
 * `npx vitest run src/operations/audit/repo.sql.test.ts -u` writes it again (docs/development.md).
 */
const USER = '44444444-4444-4444-8444-444444444444';
const OTHER_USER = '77777777-7777-4777-8777-777777777777';
const EVENT = '88888888-8888-4888-8888-888888888888';
const REPORT = '99999999-9999-4999-8999-999999999999';
const FROM = new Date('2026-03-01T00:00:00.000Z');
const TO = new Date('2026-03-14T12:00:00.000Z');
const NEWEST = { field: 'created_at', direction: 'desc' } as const;

it('matches the SQL committed in repo.sql', async () => {
  const sql = sqlRecorder();
  const repo = createAuditRepo(sql.db);
  const writer = createAuditWriter(sql.db);
  const request = { ip: '203.0.113.7', headers: { 'user-agent': 'Snapshot/1.0' } } as FastifyRequest;

  await sql.record(
    'write: an event of a request',
    () =>
      writer.write(request, {
        eventType: 'user_updated',
        userId: USER,
        actorId: OTHER_USER,
        resourceType: 'user',
        resourceId: USER,
        metadata: { fields: ['email'] },
      }),
    [[{}]],
  );

  const everyFilter = {
    userIds: [USER, OTHER_USER],
    eventType: 'user_login',
    resourceType: 'session',
    status: 'failure',
    sourceService: 'api',
    from: FROM,
    to: TO,
    isReported: true,
  } satisfies AuditFilters;
  await sql.record('page: the newest events', () => repo.page({}, NEWEST, 50, 0));
  await sql.record("page: a user's own activity", () => repo.page({ userIds: [USER] }, NEWEST, 50, 100));
  await sql.record('page: every filter, by event type', () =>
    repo.page(everyFilter, { field: 'event_type', direction: 'asc' }, 50, 0),
  );
  await sql.record('page: events without a report', () => repo.page({ isReported: false }, NEWEST, 50, 0));
  await sql.record('page: no user (an empty list of users matches nothing)', () =>
    repo.page({ userIds: [] }, NEWEST, 50, 0),
  );
  await sql.record('count: every filter', () => repo.count(everyFilter));

  await sql.record('reports: file a report on an event of the user', () =>
    repo.fileReport({ eventId: EVENT, userId: USER, reason: 'not_me', description: 'I was asleep' }),
  );
  await sql.record('reports: of a user', () => repo.reportsOfUser(USER));
  await sql.record('reports: pending, a page', () => repo.reports('pending', 20, 40));
  await sql.record('reports: the event a report names', () => repo.eventOfReport(REPORT));
  await sql.record('reports: review', () =>
    repo.review(REPORT, {
      status: 'resolved',
      resolution_notes: 'confirmed',
      reviewed_by: OTHER_USER,
      reviewed_at: TO,
    }),
  );

  await sql.record('pseudonymise the events of or by a user', () => repo.pseudonymise(USER, sql.db));
  await sql.record('add the monthly partitions', () => repo.addMonths(new Date('2026-06-01T00:00:00.000Z')), [
    undefined,
    [{ added: 0 }],
  ]);
  await sql.record('expire events before a cutoff', () => repo.expire(FROM), [
    undefined,
    [{ partitions_dropped: 0, events_deleted: '0' }],
  ]);

  await expect(sql.text()).toMatchFileSnapshot('./repo.sql');
});
