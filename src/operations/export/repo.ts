import type { Kysely } from 'kysely';
import type { Schema } from '../../platform/db/schema/index.js';

export interface NewExportLog {
  user_id: string;
  exported_at: Date;
  ip_address: string | null;
  user_agent: string | null;
  file_size_bytes: number;
  locale: string;
}

/** The camelCase shape of the interface (export resources are camelCase). */
const LOG_COLUMNS = [
  'id',
  'exported_at as exportedAt',
  'ip_address as ipAddress',
  'user_agent as userAgent',
  'export_format as exportFormat',
  'file_size_bytes as fileSizeBytes',
  'locale',
  'created_at as createdAt',
] as const;

export function createExportRepo(db: Kysely<Schema>) {
  return {
    async logsOf(userId: string, limit: number, offset: number) {
      const [logs, total] = await Promise.all([
        db
          .selectFrom('export_logs')
          .select(LOG_COLUMNS)
          .where('user_id', '=', userId)
          .orderBy('exported_at', 'desc')
          .orderBy('id')
          .limit(limit)
          .offset(offset)
          .execute(),
        db
          .selectFrom('export_logs')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('user_id', '=', userId)
          .executeTakeFirstOrThrow(),
      ]);
      return { logs, total: Number(total.n) };
    },

    insert: (log: NewExportLog, trx: Kysely<Schema>) =>
      trx.insertInto('export_logs').values(log).returning('id').executeTakeFirstOrThrow(),
  };
}
