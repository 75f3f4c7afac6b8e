import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { StringDecoder } from 'node:string_decoder';
import type { Admission } from './admission.js';
import { GpsFileErrors } from './errors.js';

export interface Spooled {
  path: string;
  bytes: number;
  /** Removes the file. */
  discard(): Promise<void>;
}

export interface SpoolOptions {
  maxBytes: number;
  /** Counts the bytes against the node's spool (throws when it is full). */
  admission: Pick<Admission, 'spooling'>;
  /** An upload that sends less than this many bytes a second over a window is cut off (408). */
  minBytesPerSecond: number;
  windowMs: number;
}

/** Spool folders are named with the process that made them, so a later start can tell those of a dead one. */
const PREFIX = 'waygate-import-';

/**
 * Writes a request body to a file of its own as it arrives (never held in memory), refusing it (413)
 * as soon as it passes `maxBytes`, when the node's spool is full (503), or when it slows below the minimum
 * rate (408); the import reads it from there after its 202.
 */
export async function spool(body: Readable, options: SpoolOptions): Promise<Spooled> {
  const dir = await mkdtemp(join(tmpdir(), `${PREFIX}${process.pid}-`));
  const discard = () => rm(dir, { recursive: true, force: true });
  const path = join(dir, 'upload');
  let bytes = 0;
  const counted = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      bytes += chunk.length;
      if (bytes > options.maxBytes) return done(GpsFileErrors.too_large());
      try {
        options.admission.spooling(chunk.length);
      } catch (err) {
        return done(err as Error);
      }
      done(null, chunk);
    },
  });
  // The body is piped, not in the pipeline: a refused upload stops being read, but its request is not
  // destroyed, so the client still gets the answer (Node drains or times out the rest).
  const written = pipeline(counted, createWriteStream(path, { mode: 0o600 }));
  body.once('error', (err) => counted.destroy(err));
  body.pipe(counted);
  // Real time, not the service's clock: this watches a socket's throughput.
  let checked = 0;
  const watch = setInterval(() => {
    if (bytes - checked < (options.minBytesPerSecond * options.windowMs) / 1000)
      counted.destroy(GpsFileErrors.upload_too_slow());
    checked = bytes;
  }, options.windowMs);
  try {
    await written;
  } catch (err) {
    body.unpipe(counted);
    await discard();
    throw err;
  } finally {
    clearInterval(watch);
  }
  return { path, bytes, discard };
}

/** Whether a process of this id runs (on this machine: spool folders are local). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Removes the spool folders of processes that are gone (killed or crashed mid-import); answers how many. */
export async function removeDeadSpools(): Promise<number> {
  const names = await readdir(tmpdir()).catch(() => [] as string[]);
  const dead = names.filter((name) => {
    const pid = Number.parseInt(name.slice(PREFIX.length), 10);
    return name.startsWith(PREFIX) && pid > 0 && !alive(pid);
  });
  await Promise.all(dead.map((name) => rm(join(tmpdir(), name), { recursive: true, force: true })));
  return dead.length;
}

/** The first `bytes` bytes of a file as text (what the format is sniffed from). */
export async function headOf(path: string, bytes: number): Promise<string> {
  const decoder = new StringDecoder('utf8');
  let text = '';
  for await (const chunk of createReadStream(path, { start: 0, end: bytes - 1 }))
    text += decoder.write(chunk as Buffer);
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
