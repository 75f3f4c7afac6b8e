import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../platform/clock.js';
import { AppError } from '../../platform/http/errors.js';
import { ImportFailure } from './parsers/candidate.js';
import { PARSERS, type ImportFormat } from './parsers/index.js';
import { checkCandidate, type ImportedPoint } from './parsers/validate.js';
import type { PointSink } from './point-sink.js';
import type { createGpsImportsRepo, ImportProgress } from './repo.js';
import { MAX_REFUSALS_LISTED } from './schemas.js';
import { kmlOfKmz } from './kmz.js';
import { textOf, type Spooled } from './spool.js';
import { MAX_BATCH_POINTS } from '../gps/service.js';

/** Points stored per batch (one statement each): larger batches cost fewer round trips, up to the batch limit. */
export const IMPORT_CHUNK = MAX_BATCH_POINTS;
/**
 * Chunks in the database at once while the file is read on: on PostgreSQL two inserts run side by side
 * (the embedded database takes them in turn). A point in two of them is stored once all the same.
 */
const CHUNKS_AT_ONCE = 2;
/** The record's counters are written at most this often while a file is read (and at the end). */
const PROGRESS_EVERY_MS = 250;

interface Deps {
  repo: ReturnType<typeof createGpsImportsRepo>;
  sink: PointSink;
  clock: Clock;
  log: FastifyBaseLogger;
  /** The most a KMZ's KML may inflate to (IMPORT_MAX_BYTES). */
  importMaxBytes: number;
}

export interface ImportJob {
  id: string;
  deviceId: string;
  sentBy: string | null;
  format: ImportFormat;
  /** Whether the client named the format (else the content showed it). */
  named: boolean;
  file: Spooled;
  signal: AbortSignal;
}

/** The report of an import whose process stopped before it ended (the service shut down, or crashed). */
export const INTERRUPTED = {
  code: 'interrupted',
  message: 'The service stopped during the import; the points stored so far stay, send the file again to add the rest',
};

/** Why a job stopped, for its report: a file fault as the parser named it, anything else without internals. */
function failureOf(err: unknown, signal: AbortSignal): { code: string; message: string } | undefined {
  if (err instanceof ImportFailure) return { code: err.code, message: err.message };
  if (signal.aborted || (err instanceof AppError && err.status === 503)) {
    return INTERRUPTED;
  }
  if (err instanceof AppError) return { code: err.code, message: err.message };
  return undefined;
}

/** The earliest and the latest time of a chunk's points. */
function timesOf(points: readonly ImportedPoint[]): { first: Date; last: Date } {
  let first = points[0]!.timestamp;
  let last = first;
  for (const { timestamp } of points) {
    if (timestamp < first) first = timestamp;
    if (timestamp > last) last = timestamp;
  }
  return { first, last };
}

/**
 * Reads a spooled file with its format's parser, checks each point, stores them IMPORT_CHUNK at a time
 * through the sink (which skips duplicates), and keeps the record's counters current. Ends done or failed,
 * always with a report; the file is removed.
 */
export async function runImport(deps: Deps, job: ImportJob): Promise<void> {
  const progress: ImportProgress = {
    imported: 0,
    duplicates: 0,
    refusedCount: 0,
    refused: [],
    notesCount: 0,
    notes: [],
    bytesRead: 0,
  };
  let chunk: ImportedPoint[] = [];
  let lastWrite = -Infinity;
  /** Chunks being stored while the file is read on, so the parsing and the database's inserts overlap. */
  const storing = new Set<Promise<void>>();
  const refuse = (at: string, reason: string) => {
    progress.refusedCount++;
    if (progress.refused.length < MAX_REFUSALS_LISTED) progress.refused.push({ at, reason });
  };
  /** Where the point being checked stands, for its notes (one function for all points, not one each). */
  let at = '';
  const note = (text: string) => {
    progress.notesCount++;
    if (progress.notes.length < MAX_REFUSALS_LISTED) progress.notes.push({ at, note: text });
  };
  async function store(points: ImportedPoint[]) {
    if (points.length > 0) {
      // The record covers the chunk's times before its points are stored: removing the import's points finds
      // them in that range, even those of a process that stops right after storing them.
      await deps.repo.cover(job.id, timesOf(points));
      const { stored, duplicates } = await deps.sink.insertBatch({
        deviceId: job.deviceId,
        sentBy: job.sentBy,
        importId: job.id,
        points,
      });
      progress.imported += stored;
      progress.duplicates += duplicates;
    }
    // A throttle, not a rule about time: the process's own clock.
    if (performance.now() - lastWrite >= PROGRESS_EVERY_MS) {
      lastWrite = performance.now();
      await deps.repo.progress(job.id, progress, deps.clock.now());
    }
  }
  /** Starts storing the chunk read so far once fewer than CHUNKS_AT_ONCE are (a failed one ends the import here). */
  async function flush() {
    while (storing.size >= CHUNKS_AT_ONCE) await Promise.race(storing);
    const stored: Promise<void> = store(chunk).finally(() => storing.delete(stored));
    // Awaited by a later flush or at the end; until then its failure must not count as unhandled.
    stored.catch(() => undefined);
    storing.add(stored);
    chunk = [];
  }
  const flushAll = async () => {
    await flush();
    await Promise.all(storing);
  };
  /** Every chunk sent to the database has succeeded or failed (before the report is written). */
  const settled = () => Promise.allSettled(storing);
  let failure: { code: string; message: string } | undefined;
  try {
    const onBytes = (bytes: number) => (progress.bytesRead = bytes);
    const text =
      job.format === 'kmz'
        ? kmlOfKmz(job.file.path, job.file.bytes, deps.importMaxBytes, onBytes)
        : textOf(job.file.path, onBytes);
    for await (const item of PARSERS[job.format](text)) {
      if (job.signal.aborted) throw new Error('aborted');
      if ('refused' in item) {
        refuse(item.refused.at, item.refused.reason);
        continue;
      }
      if ('noted' in item) {
        at = item.noted.at;
        note(item.noted.note);
        continue;
      }
      at = item.candidate.at;
      const point = checkCandidate(item.candidate, deps.clock.nowMs(), note);
      if (typeof point === 'string') refuse(at, point);
      else if (chunk.push(point) >= IMPORT_CHUNK) await flush();
    }
    await flushAll();
    // A named format the file does not hold: say so, rather than "done, 0 imported, 0 refused".
    if (job.named && progress.imported + progress.duplicates + progress.refusedCount + progress.notesCount === 0) {
      throw new ImportFailure('nothing_recognised', `Nothing in the file was recognised as ${job.format}`);
    }
  } catch (err) {
    // A fault in the file: what was read before it is stored too, so the report says exactly what is in.
    if (err instanceof ImportFailure) await flushAll().catch(() => undefined);
    await settled();
    failure = failureOf(err, job.signal);
    if (!failure) {
      deps.log.error({ err, import_id: job.id }, 'GPS import failed');
      failure = {
        code: 'internal',
        message: 'The import stopped on an unexpected error; the points stored so far stay',
      };
    }
  } finally {
    await job.file
      .discard()
      .catch((err: unknown) => deps.log.warn({ err, import_id: job.id }, 'could not remove a spooled import file'));
  }
  await deps.repo
    .finish(job.id, progress, deps.clock.now(), failure)
    .catch((err: unknown) => deps.log.error({ err, import_id: job.id }, 'could not record the end of a GPS import'));
}
