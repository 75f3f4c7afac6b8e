/**
 * What a parser found: a point as the file spells it (values unchecked, of any type), or a refusal.
 * `at` says where: a line, or an element and its index.
 */
export interface Candidate {
  at: string;
  latitude: unknown;
  longitude: unknown;
  time: unknown;
  altitude?: unknown;
  /** Metres per second. */
  speed?: unknown;
  heading?: unknown;
  hdop?: unknown;
  vdop?: unknown;
  pdop?: unknown;
}

export interface Refusal {
  at: string;
  reason: string;
}

/** Something read and left out without refusing a point (positions without times between two that have them). */
export interface Note {
  at: string;
  note: string;
}

export type Parsed = { candidate: Candidate } | { refused: Refusal } | { noted: Note };

/** A file that cannot be read on: the import stops here, failed, with this code and message in its report. */
export class ImportFailure extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ImportFailure';
  }
}

/** A parser: the text of a file in (chunks of UTF-8 text), what it finds out, in file order. */
export type Parser = (text: AsyncIterable<string>) => AsyncGenerator<Parsed>;

export const found = (candidate: Candidate): Parsed => ({ candidate });
export const refused = (at: string, reason: string): Parsed => ({ refused: { at, reason } });
export const noted = (at: string, note: string): Parsed => ({ noted: { at, note } });
