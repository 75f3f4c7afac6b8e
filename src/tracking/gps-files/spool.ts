import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { StringDecoder } from 'node:string_decoder';
import { GpsFileErrors } from './errors.js';

export interface Spooled {
  path: string;
  bytes: number;
  /** Removes the file. */
  discard(): Promise<void>;
}

/**
 * Writes a request body to a file of its own as it arrives (never held in memory), refusing it (413)
 * as soon as it passes `maxBytes`; the import reads it from there after its 202.
 */
export async function spool(body: Readable, maxBytes: number): Promise<Spooled> {
  const dir = await mkdtemp(join(tmpdir(), 'waygate-import-'));
  const discard = () => rm(dir, { recursive: true, force: true });
  const path = join(dir, 'upload');
  let bytes = 0;
  const counted = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      bytes += chunk.length;
      done(bytes > maxBytes ? GpsFileErrors.too_large() : null, chunk);
    },
  });
  try {
    await pipeline(body, counted, createWriteStream(path));
  } catch (err) {
    await discard();
    throw err;
  }
  return { path, bytes, discard };
}

/** The first `bytes` bytes of a file as text (what the format is sniffed from). */
export async function headOf(path: string, bytes: number): Promise<string> {
  const decoder = new StringDecoder('utf8');
  let text = '';
  for await (const chunk of createReadStream(path, { start: 0, end: bytes - 1 })) text += decoder.write(chunk as Buffer);
  return text;
}

/** A file as UTF-8 text chunks, telling `onBytes` how far it has read. */
export async function* textOf(path: string, onBytes: (bytes: number) => void): AsyncGenerator<string> {
  const decoder = new StringDecoder('utf8');
  let read = 0;
  for await (const chunk of createReadStream(path, { highWaterMark: 256 * 1024 })) {
    read += (chunk as Buffer).length;
    onBytes(read);
    yield decoder.write(chunk as Buffer);
  }
  const rest = decoder.end();
  if (rest) yield rest;
}
