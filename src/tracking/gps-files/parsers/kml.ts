import { found, noted, refused, type Parsed } from './candidate.js';
import { parseXml } from './xml.js';

/** "lon,lat[,alt]" (KML coordinates) or "lon lat [alt]" (gx:coord). */
const coordinatesOf = (text: string, separator: string | RegExp) => {
  const [longitude, latitude, altitude] = text.trim().split(separator);
  return { longitude, latitude, altitude };
};

/** The elements whose text is read. */
const TEXTS = new Set(['when', 'begin', 'end', 'coord', 'coordinates']);

interface Placemark {
  at: string;
  /** TimeStamp */
  when?: string;
  /** TimeSpan */
  begin?: string;
  end?: string;
  /** The text of each coordinates element: a MultiGeometry has several. */
  geometries: string[];
}

/**
 * A geometry at a TimeStamp: a position is a point, a line or shape has no times. At a TimeSpan (a visit or a
 * move, as Google's location history KML writes them): its first position at the beginning, its last at the
 * end; the positions between have no time of their own and are left out with a note.
 */
function* geometryPoints(placemark: Placemark, coordinates: string, at: string): Generator<Parsed> {
  const positions = coordinates.trim().split(/\s+/);
  const { when, begin, end } = placemark;
  if (when !== undefined || (begin === undefined && end === undefined)) {
    if (positions.length > 1) yield refused(at, 'a line or shape without times');
    else yield found({ at, time: when, ...coordinatesOf(positions[0]!, ',') });
    return;
  }
  if (begin !== undefined) yield found({ at, time: begin, ...coordinatesOf(positions[0]!, ',') });
  if (end !== undefined && (positions.length > 1 || end !== begin))
    yield found({ at: `${at} end`, time: end, ...coordinatesOf(positions.at(-1)!, ',') });
  if (positions.length > 2)
    yield noted(at, `${positions.length - 2} positions between the TimeSpan's begin and end have no times; left out`);
}

/**
 * KML 2.2: Placemarks with a TimeStamp or a TimeSpan and a Point, a line or a MultiGeometry of them (as our
 * export and Google's location history write them), and gx:Track (times and coordinates in pairs, also inside
 * gx:MultiTrack). A Placemark with a position but no time is refused.
 */
export const parseKml = (text: AsyncIterable<string>): AsyncGenerator<Parsed> =>
  parseXml(
    text,
    (name) => TEXTS.has(name),
    (out) => {
      let placemarks = 0;
      let tracks = 0;
      let placemark: Placemark | undefined;
      let track: { at: string; whens: string[]; coords: string[] } | undefined;
      return {
        open(name, _attributes, line) {
          if (name === 'Placemark') placemark = { at: `Placemark ${++placemarks} (line ${line})`, geometries: [] };
          if (name === 'Track') track = { at: `Track ${++tracks} (line ${line})`, whens: [], coords: [] };
        },
        close(name, own) {
          const value = own.trim();
          if (track) {
            if (name === 'when') track.whens.push(value);
            else if (name === 'coord') track.coords.push(value);
            else if (name === 'Track') {
              const { at, whens, coords } = track;
              if (whens.length !== coords.length)
                out.push(refused(at, `${whens.length} times for ${coords.length} coordinates`));
              else
                coords.forEach((coord, i) =>
                  out.push(found({ at: `${at} point ${i + 1}`, time: whens[i], ...coordinatesOf(coord, /\s+/) })),
                );
              track = undefined;
            }
            return;
          }
          if (!placemark) return;
          if (name === 'when' || name === 'begin' || name === 'end') placemark[name] = value;
          else if (name === 'coordinates') placemark.geometries.push(value);
          else if (name === 'Placemark') {
            const { at, geometries } = placemark;
            geometries.forEach((coordinates, i) =>
              out.push(
                ...geometryPoints(placemark!, coordinates, geometries.length > 1 ? `${at} geometry ${i + 1}` : at),
              ),
            );
            placemark = undefined;
          }
        },
      };
    },
  );
