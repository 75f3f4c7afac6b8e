import { found, ImportFailure, refused, type Candidate, type Parsed } from './candidate.js';
import { linesOf } from './lines.js';
import { numberOf } from './validate.js';

/** Header names we read (lower case), and the field each fills. */
const COLUMNS: Record<string, keyof Candidate> = {
  timestamp: 'time',
  time: 'time',
  datetime: 'time',
  date_time: 'time',
  date: 'time',
  utc: 'time',
  latitude: 'latitude',
  lat: 'latitude',
  longitude: 'longitude',
  lon: 'longitude',
  lng: 'longitude',
  long: 'longitude',
  altitude: 'altitude',
  alt: 'altitude',
  ele: 'altitude',
  elevation: 'altitude',
  heading: 'heading',
  course: 'heading',
  bearing: 'heading',
  speed_mps: 'speed',
  speed: 'speed',
  hdop: 'hdop',
  vdop: 'vdop',
  pdop: 'pdop',
};

/** One CSV line's cells (RFC 4180 quoting within a line: "a ""b""" is a "b"). */
export function cellsOf(line: string, separator: string): string[] {
  // Most lines quote nothing: split natively rather than a character at a time.
  if (!line.includes('"')) return line.split(separator).map((value) => value.trim());
  const cells: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') ((cell += '"'), i++);
      else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"' && cell === '') quoted = true;
    else if (c === separator) (cells.push(cell), (cell = ''));
    else cell += c;
  }
  cells.push(cell);
  return cells.map((value) => value.trim());
}

/** "52,5163" (a decimal comma, as spreadsheets in German or French write it) as "52.5163"; other text as it is. */
const withDecimalPoint = (cell: string) =>
  cell.length <= 64 && /^[-+]?\d+,\d+$/.test(cell) ? cell.replace(',', '.') : cell;

/**
 * CSV with a header line naming its columns (ours: timestamp, latitude, longitude, altitude, …; also
 * lat/lon/lng, time, ele, course). Comma, semicolon or tab separated, as the header shows; with semicolons or
 * tabs a number may have a decimal comma. speed is m/s;
 * a file with only speed_kmh is read as that divided by 3.6.
 */
export async function* parseCsv(text: AsyncIterable<string>): AsyncGenerator<Parsed> {
  let header: { separator: string; fields: (keyof Candidate | 'speed_kmh' | undefined)[] } | undefined;
  for await (const line of linesOf(text)) {
    const at = `line ${line.number}`;
    if ('tooLong' in line) {
      yield refused(at, 'line too long');
      continue;
    }
    if (line.text.trim() === '') continue;
    if (!header) {
      const separator = [',', ';', '\t']
        .map((s) => [s, line.text.split(s).length] as const)
        .sort((a, b) => b[1] - a[1])[0]![0];
      const names = cellsOf(line.text.replace(/^\uFEFF/, ''), separator).map((name) => name.toLowerCase());
      const fields = names.map((name) =>
        name === 'speed_kmh' ? 'speed_kmh' : Object.hasOwn(COLUMNS, name) ? COLUMNS[name] : undefined,
      );
      if (!fields.includes('latitude') || !fields.includes('longitude') || !fields.includes('time')) {
        throw new ImportFailure(
          'no_header',
          'The first line of a CSV file must name its columns, with a time, a latitude and a longitude',
        );
      }
      header = { separator, fields };
      continue;
    }
    const cells = cellsOf(line.text, header.separator);
    if (cells.length !== header.fields.length) {
      yield refused(at, `${cells.length} cells where the header names ${header.fields.length}`);
      continue;
    }
    const candidate: Candidate = { at, latitude: undefined, longitude: undefined, time: undefined };
    const record = candidate as unknown as Record<string, unknown>;
    const decimalCommas = header.separator !== ',';
    header.fields.forEach((field, i) => {
      const cell = cells[i]!;
      if (!field || cell === '') return;
      const value = decimalCommas && field !== 'time' ? withDecimalPoint(cell) : cell;
      if (field === 'speed_kmh') {
        const kmh = numberOf(value);
        if (record.speed === undefined) record.speed = kmh === undefined ? value : kmh / 3.6;
      } else if (record[field] === undefined) record[field] = value;
    });
    yield found(candidate);
  }
}
