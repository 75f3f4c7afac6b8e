import { found, refused, type Candidate, type Parsed } from './candidate.js';
import { parseXml } from './xml.js';

const POINTS = new Set(['trkpt', 'rtept', 'wpt']);
/** Children of a point we read, by local name, whatever the namespace (GPX 1.0 speed and course, Garmin's extensions, ours). */
const FIELDS: Record<string, keyof Candidate> = {
  ele: 'altitude',
  time: 'time',
  speed: 'speed',
  course: 'heading',
  hdop: 'hdop',
  vdop: 'vdop',
  pdop: 'pdop',
};

/**
 * GPX 1.0 and 1.1: track points, route points and waypoints with their time, elevation and (where given)
 * speed, course and dilutions. A point without a time is refused (an imported track needs them).
 */
export const parseGpx = (text: AsyncIterable<string>): AsyncGenerator<Parsed> =>
  parseXml(
    text,
    (name) => Object.hasOwn(FIELDS, name),
    (out) => {
      const counts: Record<string, number> = { trkpt: 0, rtept: 0, wpt: 0 };
      let point: Candidate | undefined;
      let sawRoot = false;
      return {
        open(name, attributes, line) {
          if (!sawRoot) {
            sawRoot = true;
            if (name !== 'gpx') out.push(refused(`line ${line}`, `the root element is ${name}, not gpx`));
          }
          if (!POINTS.has(name)) return;
          point = {
            at: `${name} ${++counts[name]!} (line ${line})`,
            latitude: attributes.lat,
            longitude: attributes.lon,
            time: undefined,
          };
        },
        close(name, own) {
          if (!point) return;
          if (POINTS.has(name)) {
            out.push(found(point));
            point = undefined;
            return;
          }
          const field = Object.hasOwn(FIELDS, name) ? FIELDS[name] : undefined;
          if (field && own.trim() !== '') (point as unknown as Record<string, unknown>)[field] = own.trim();
        },
      };
    },
  );
