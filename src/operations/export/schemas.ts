import { Type } from 'typebox';
import { DateTime, named, Nullable, Uuid } from '../../platform/http/schemas.js';

export const EXPORT_LOGS_DEFAULT_LIMIT = 50;
export const EXPORT_LOGS_MAX_LIMIT = 100;

export const ExportLogsQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ default: EXPORT_LOGS_DEFAULT_LIMIT, description: 'Clamped to 1..100' })),
  offset: Type.Optional(Type.Integer({ minimum: 0, default: 0 })),
});

export const ExportLog = named(
  'ExportLog',
  Type.Object(
    {
      id: Uuid,
      exportedAt: DateTime,
      ipAddress: Nullable(Type.String()),
      userAgent: Nullable(Type.String()),
      exportFormat: Type.String({ examples: ['zip'] }),
      fileSizeBytes: Type.Integer({ description: 'Size of the archive as sent' }),
      locale: Type.String(),
      createdAt: DateTime,
    },
    {
      examples: [
        {
          id: '5e4d3c2b-1a0f-4e9d-8c7b-6a5f4e3d2c1b',
          exportedAt: '2026-11-25T09:30:00.000Z',
          ipAddress: '203.0.113.9',
          userAgent: 'Mozilla/5.0',
          exportFormat: 'zip',
          fileSizeBytes: 3198812,
          locale: 'en',
          createdAt: '2026-11-25T09:30:04.000Z',
        },
      ],
    },
  ),
);

export const ExportLogList = Type.Object({
  logs: Type.Array(ExportLog),
  total: Type.Integer(),
  hasMore: Type.Boolean(),
});

export const ZipFile = Type.Unsafe<NodeJS.ReadableStream>({
  type: 'string',
  format: 'binary',
  description: 'service-data-export-{date}.zip',
});
