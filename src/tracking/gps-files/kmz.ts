import { StringDecoder } from 'node:string_decoder';
import type { Readable } from 'node:stream';
import yauzl, { type Entry, type ZipFile } from 'yauzl';
import { ImportFailure } from './parsers/candidate.js';

/** Entries looked at for the KML document before giving up (a KMZ holds one KML and its images). */
const MAX_ENTRIES = 10_000;

const malformed = (err: unknown) =>
  err instanceof ImportFailure
    ? err
    : new ImportFailure(
        'malformed_zip',
        `Not a readable KMZ (zip) file: ${err instanceof Error ? err.message : String(err)}`,
      );

const openZip = (path: string) =>
  new Promise<ZipFile>((resolve, reject) =>
    yauzl.open(
      path,
      { lazyEntries: true, autoClose: true, validateEntrySizes: true, strictFileNames: false },
      (err, zip) => (err ? reject(err) : resolve(zip)),
    ),
  );

/** The archive's first .kml document, as KMZ's definition names the main one (usually doc.kml); undefined when none. */
function firstKml(zip: ZipFile): Promise<Entry | undefined> {
  let seen = 0;
  return new Promise((resolve, reject) => {
    zip.on('entry', (entry: Entry) => {
      if (/\.kml$/i.test(entry.fileName)) return resolve(entry);
      if (++seen >= MAX_ENTRIES) return resolve(undefined);
      zip.readEntry();
    });
    zip.on('end', () => resolve(undefined));
    zip.on('error', reject);
    zip.readEntry();
  });
}

const openEntry = (zip: ZipFile, entry: Entry) =>
  new Promise<Readable>((resolve, reject) =>
    zip.openReadStream(entry, (err, stream) => (err ? reject(err) : resolve(stream))),
  );

/**
 * The KML document of a KMZ file as UTF-8 text chunks, decompressed as it is read, at most `maxBytes` of it
 * (a small archive can inflate to far more than any upload: the import fails past it). `onBytes` is told how
 * far through the file the reading is, in the file's own bytes.
 */
export async function* kmlOfKmz(
  path: string,
  fileBytes: number,
  maxBytes: number,
  onBytes: (bytes: number) => void,
): AsyncGenerator<string> {
  let zip: ZipFile | undefined;
  try {
    zip = await openZip(path);
    const entry = await firstKml(zip);
    if (!entry) throw new ImportFailure('no_kml', 'The KMZ (zip) file holds no .kml document');
    if (entry.uncompressedSize > maxBytes)
      throw new ImportFailure(
        'kmz_too_large',
        `The KMZ's KML document is larger than IMPORT_MAX_BYTES (${maxBytes} bytes)`,
      );
    const decoder = new StringDecoder('utf8');
    let read = 0;
    for await (const chunk of await openEntry(zip, entry)) {
      read += (chunk as Buffer).length;
      onBytes(Math.min(fileBytes, Math.round((fileBytes * read) / Math.max(1, entry.uncompressedSize))));
      yield decoder.write(chunk as Buffer);
    }
    const rest = decoder.end();
    if (rest) yield rest;
  } catch (err) {
    throw malformed(err);
  } finally {
    zip?.close();
  }
}
