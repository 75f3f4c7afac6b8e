import { Readable } from 'node:stream';
import { GpsFileErrors } from './errors.js';
import {
  formatOfAccept,
  WRITERS,
  type ExportFormat,
  type ExportMeta,
  type ExportPoint,
  type FormatWriter,
} from './writers/index.js';

/** The format a request asks for: its format parameter, else its Accept header (406 when that names none we write). */
export function chooseFormat(format: ExportFormat | undefined, accept: string | undefined): ExportFormat {
  const chosen = format ?? formatOfAccept(accept);
  if (!chosen) throw GpsFileErrors.not_acceptable();
  return chosen;
}

/** A name safe in a Content-Disposition file name: ASCII letters, digits, dot, dash and underscore. */
export const fileSlug = (name: string, fallback: string) =>
  name
    .normalize('NFKD')
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/^[-.]+|-+$/g, '')
    .slice(0, 60) || fallback;

export interface ExportFile {
  fileName: string;
  contentType: string;
  stream: Readable;
}

/**
 * A file streamed as it is read: the head, then each batch of points as the client takes it (the
 * database is read one batch ahead of the socket, whatever the number of points), then the tail.
 */
export function exportFile(
  format: ExportFormat,
  baseName: string,
  meta: ExportMeta,
  batches: AsyncIterable<readonly ExportPoint[]>,
): ExportFile {
  const writer: FormatWriter = WRITERS[format];
  async function* text() {
    yield Buffer.from(writer.head(meta));
    let first = true;
    for await (const batch of batches) {
      if (batch.length === 0) continue;
      yield Buffer.from(writer.points(batch, first));
      first = false;
    }
    yield Buffer.from(writer.tail());
  }
  return {
    fileName: `${baseName}.${writer.extension}`,
    contentType: writer.contentType,
    stream: Readable.from(text(), { objectMode: false }),
  };
}

/** Every point of a trip, oldest first, a batch at a time, by the keyset pages the GPS module serves. */
export async function* pagesOf(
  page: (
    limit: number,
    start: { offset: number } | { after: { at: Date; id: string } },
  ) => Promise<{ rows: ExportPoint[]; more: boolean }>,
  batchSize = 1000,
): AsyncGenerator<ExportPoint[]> {
  let start: { offset: number } | { after: { at: Date; id: string } } = { offset: 0 };
  for (;;) {
    const { rows, more } = await page(batchSize, start);
    if (rows.length > 0) yield rows;
    if (!more || rows.length === 0) return;
    const last = rows[rows.length - 1]!;
    start = { after: { at: last.timestamp, id: last.id } };
  }
}
