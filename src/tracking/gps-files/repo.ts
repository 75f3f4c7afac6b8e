import type { Kysely } from 'kysely';
import type { Schema } from '../../platform/db/schema/index.js';

const COLUMNS = [
  'id', 'device_id', 'format', 'status', 'imported', 'duplicates', 'refused_count', 'refused', 'bytes_read', 'bytes_total',
  'error_code', 'error_message', 'created_at', 'finished_at',
] as const;

export interface ImportProgress {
  imported: number;
  duplicates: number;
  refusedCount: number;
  refused: { at: string; reason: string }[];
  bytesRead: number;
}

const progressColumns = (p: ImportProgress) => ({
  imported: p.imported,
  duplicates: p.duplicates,
  refused_count: p.refusedCount,
  refused: JSON.stringify(p.refused),
  bytes_read: p.bytesRead,
  updated_at: new Date(),
});

/** The import records (gps_imports). */
export function createGpsImportsRepo(db: Kysely<Schema>) {
  return {
    create: (row: { device_id: string; created_by: string | null; format: string; bytes_total: number }) =>
      db.insertInto('gps_imports').values(row).returning(COLUMNS).executeTakeFirstOrThrow(),
    get: (id: string) => db.selectFrom('gps_imports').select(COLUMNS).where('id', '=', id).executeTakeFirst(),
    progress: (id: string, progress: ImportProgress) =>
      db.updateTable('gps_imports').set(progressColumns(progress)).where('id', '=', id).execute(),
    finish: (id: string, progress: ImportProgress, finishedAt: Date, error?: { code: string; message: string }) =>
      db
        .updateTable('gps_imports')
        .set({ ...progressColumns(progress), status: error ? 'failed' : 'done', finished_at: finishedAt, error_code: error?.code ?? null, error_message: error?.message ?? null })
        .where('id', '=', id)
        .execute(),
  };
}

type Row = NonNullable<Awaited<ReturnType<ReturnType<typeof createGpsImportsRepo>['get']>>>;

/** A record as the API shows it. */
export const toGpsImport = ({ error_code, error_message, ...row }: Row) => ({
  ...row,
  error: error_code ? { code: error_code, message: error_message ?? '' } : null,
});
