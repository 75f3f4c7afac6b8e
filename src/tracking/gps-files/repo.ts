import type { Kysely } from 'kysely';
import type { Schema } from '../../platform/db/schema/index.js';

const COLUMNS = [
  'id',
  'device_id',
  'format',
  'status',
  'imported',
  'duplicates',
  'refused_count',
  'refused',
  'notes_count',
  'notes',
  'bytes_read',
  'bytes_total',
  'error_code',
  'error_message',
  'created_by',
  'first_point_at',
  'last_point_at',
  'reverted_at',
  'removed',
  'created_at',
  'finished_at',
] as const;

export interface ImportProgress {
  imported: number;
  duplicates: number;
  refusedCount: number;
  refused: { at: string; reason: string }[];
  notesCount: number;
  notes: { at: string; note: string }[];
  bytesRead: number;
}

/** `at`: the clock's now, which is also the heartbeat other nodes read (see `failIfStale`). */
const progressColumns = (p: ImportProgress, at: Date) => ({
  imported: p.imported,
  duplicates: p.duplicates,
  refused_count: p.refusedCount,
  refused: JSON.stringify(p.refused),
  notes_count: p.notesCount,
  notes: JSON.stringify(p.notes),
  bytes_read: p.bytesRead,
  updated_at: at,
});

/** The import records (gps_imports). */
export function createGpsImportsRepo(db: Kysely<Schema>) {
  return {
    create: (row: { device_id: string; created_by: string | null; format: string; bytes_total: number }) =>
      db.insertInto('gps_imports').values(row).returning(COLUMNS).executeTakeFirstOrThrow(),
    get: (id: string) => db.selectFrom('gps_imports').select(COLUMNS).where('id', '=', id).executeTakeFirst(),

    /** A page of imports, newest first: those a user started (or every one), of one device or all, and their total. */
    async page(filter: { startedBy?: string; deviceId?: string }, limit: number, offset: number) {
      let query = db.selectFrom('gps_imports');
      if (filter.startedBy !== undefined) query = query.where('created_by', '=', filter.startedBy);
      if (filter.deviceId !== undefined) query = query.where('device_id', '=', filter.deviceId);
      const [rows, total] = await Promise.all([
        query.select(COLUMNS).orderBy('created_at', 'desc').orderBy('id').limit(limit).offset(offset).execute(),
        query.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
      ]);
      return { rows, total: Number(total.n) };
    },

    /** Widens the record's time range to cover a chunk's points (before they are stored). */
    cover: (id: string, times: { first: Date; last: Date }) =>
      db
        .updateTable('gps_imports')
        .set((eb) => ({
          first_point_at: eb.fn('least', [eb.fn.coalesce('first_point_at', eb.val(times.first)), eb.val(times.first)]),
          last_point_at: eb.fn('greatest', [eb.fn.coalesce('last_point_at', eb.val(times.last)), eb.val(times.last)]),
        }))
        .where('id', '=', id)
        .execute()
        .then(() => undefined),

    /** Its points were removed: `removed` more of them, now. */
    reverted: (id: string, removed: number, at: Date) =>
      db
        .updateTable('gps_imports')
        .set((eb) => ({ reverted_at: at, removed: eb('removed', '+', removed), updated_at: at }))
        .where('id', '=', id)
        .returning(COLUMNS)
        .executeTakeFirst(),
    progress: (id: string, progress: ImportProgress, at: Date) =>
      db.updateTable('gps_imports').set(progressColumns(progress, at)).where('id', '=', id).execute(),
    /** Tells readers these running imports still have a process (their updated_at is the heartbeat). */
    touch: (ids: string[], at: Date) =>
      ids.length === 0
        ? Promise.resolve()
        : db
            .updateTable('gps_imports')
            .set({ updated_at: at })
            .where('id', 'in', ids)
            .where('status', '=', 'running')
            .execute()
            .then(() => undefined),
    /**
     * An import still `running` whose process has not been heard of since `cutoff` (it crashed, or was killed)
     * ends as failed with `error`; one that finished meanwhile is left alone. Whether it was marked.
     */
    async failIfStale(id: string, cutoff: Date, finishedAt: Date, error: { code: string; message: string }) {
      const result = await db
        .updateTable('gps_imports')
        .set({
          status: 'failed',
          finished_at: finishedAt,
          error_code: error.code,
          error_message: error.message,
          updated_at: finishedAt,
        })
        .where('id', '=', id)
        .where('status', '=', 'running')
        .where('updated_at', '<', cutoff)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },
    finish: (id: string, progress: ImportProgress, finishedAt: Date, error?: { code: string; message: string }) =>
      db
        .updateTable('gps_imports')
        .set({
          ...progressColumns(progress, finishedAt),
          status: error ? 'failed' : 'done',
          finished_at: finishedAt,
          error_code: error?.code ?? null,
          error_message: error?.message ?? null,
        })
        .where('id', '=', id)
        .execute(),
  };
}

type Row = Awaited<ReturnType<ReturnType<typeof createGpsImportsRepo>['create']>>;

/** A record as the API shows it. */
export const toGpsImport = ({ error_code, error_message, ...row }: Row) => ({
  ...row,
  error: error_code ? { code: error_code, message: error_message ?? '' } : null,
});
