import type { ExportPoint, FormatWriter } from './types.js';

export const CSV_COLUMNS = [
  'timestamp',
  'latitude',
  'longitude',
  'altitude',
  'heading',
  'speed_kmh',
  'speed_mps',
  'speed_mph',
  'speed_knots',
  'hdop',
  'vdop',
  'pdop',
  'trip_id',
  'id',
] as const;

const cell = (value: unknown) =>
  value === null || value === undefined ? '' : value instanceof Date ? value.toISOString() : String(value);
const row = (p: ExportPoint) => CSV_COLUMNS.map((column) => cell(p[column])).join(',');

/** CSV (RFC 4180): a header line, one line a point, CRLF line ends; no cell needs quoting (numbers, ids, ISO times). */
export const csvWriter: FormatWriter = {
  contentType: 'text/csv; charset=utf-8',
  extension: 'csv',
  head: () => `${CSV_COLUMNS.join(',')}\r\n`,
  points: (batch) => batch.map((p) => `${row(p)}\r\n`).join(''),
  tail: () => '',
};
