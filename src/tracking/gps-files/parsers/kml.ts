import { found, refused, type Parsed } from './candidate.js';
import { parseXml } from './xml.js';

/** "lon,lat[,alt]" (KML coordinates) or "lon lat [alt]" (gx:coord). */
const coordinatesOf = (text: string, separator: RegExp) => {
  const [longitude, latitude, altitude] = text.trim().split(separator);
  return { longitude, latitude, altitude };
};

/** The elements whose text is read. */
const TEXTS = new Set(['when', 'coord', 'coordinates']);

/**
 * KML 2.2: Placemarks with a TimeStamp and a Point (as our export writes them, and Google's location
 * history did), and gx:Track (times and coordinates in pairs). A Placemark with a position but no time is refused.
 */
export const parseKml = (text: AsyncIterable<string>): AsyncGenerator<Parsed> =>
  parseXml(text, (name) => TEXTS.has(name), (out) => {
    let placemarks = 0;
    let tracks = 0;
    let placemark: { at: string; when?: string; coordinates?: string; tracked: boolean } | undefined;
    let track: { at: string; whens: string[]; coords: string[] } | undefined;
    return {
      open(name, _attributes, line) {
        if (name === 'Placemark') placemark = { at: `Placemark ${++placemarks} (line ${line})`, tracked: false };
        if (name === 'Track') track = { at: `Track ${++tracks} (line ${line})`, whens: [], coords: [] };
      },
      close(name, text) {
        const value = text.trim();
        if (track) {
          if (name === 'when') track.whens.push(value);
          else if (name === 'coord') track.coords.push(value);
          else if (name === 'Track') {
            const { at, whens, coords } = track;
            if (whens.length !== coords.length) out.push(refused(at, `${whens.length} times for ${coords.length} coordinates`));
            else coords.forEach((coord, i) => out.push(found({ at: `${at} point ${i + 1}`, time: whens[i], ...coordinatesOf(coord, /\s+/) })));
            track = undefined;
            if (placemark) placemark.tracked = true;
          }
          return;
        }
        if (!placemark) return;
        if (name === 'when') placemark.when = value;
        else if (name === 'coordinates' && placemark.coordinates === undefined) placemark.coordinates = value;
        else if (name === 'Placemark') {
          const { at, when, coordinates, tracked } = placemark;
          placemark = undefined;
          if (tracked || coordinates === undefined) return;
          if (/\s/.test(coordinates)) out.push(refused(at, 'a line or shape without times'));
          else out.push(found({ at, time: when, ...coordinatesOf(coordinates, /,/) }));
        }
      },
    };
  });
