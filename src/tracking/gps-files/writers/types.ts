import type { Selectable } from 'kysely';
import type { GpsPointsTable } from '../../../platform/db/schema/tracking.js';

/** A stored point as the writers see it (the GPS module's point, read a batch at a time). */
export type ExportPoint = Omit<Selectable<GpsPointsTable>, 'device_id' | 'sent_by' | 'import_id' | 'created_at'>;

/** What a file is about: its name in the file and when it was made. */
export interface ExportMeta {
  name: string;
  exportedAt: Date;
}

/** One file format: the text before the points, the text of a batch of points, the text after them. */
export interface FormatWriter {
  contentType: string;
  extension: string;
  head(meta: ExportMeta): string;
  points(batch: readonly ExportPoint[], first: boolean): string;
  tail(): string;
}

const XML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };
/** Text safe inside XML content and attributes; characters XML 1.0 cannot hold at all are dropped. */
export const xmlText = (text: string) =>
  text.replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, '').replace(/[&<>"']/g, (c) => XML_ESCAPES[c]!);
