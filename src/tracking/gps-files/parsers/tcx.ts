import { found, refused, type Candidate, type Parsed } from './candidate.js';
import { parseXml } from './xml.js';

/** Children of a Trackpoint we read, by local name (Speed is Garmin's ActivityExtension, in m/s). */
const FIELDS: Record<string, keyof Candidate> = {
  Time: 'time',
  LatitudeDegrees: 'latitude',
  LongitudeDegrees: 'longitude',
  AltitudeMeters: 'altitude',
  Speed: 'speed',
};

/**
 * TCX (Garmin's Training Center XML, also Strava's export): the Trackpoints of every Activity's laps and of
 * every Course. A Trackpoint with no Position (heart rate or cadence only, which watches write while the
 * GPS has no fix) is no position and is passed over, as OwnTracks' non-location messages are.
 */
export const parseTcx = (text: AsyncIterable<string>): AsyncGenerator<Parsed> =>
  parseXml(
    text,
    (name) => Object.hasOwn(FIELDS, name),
    (out) => {
      let points = 0;
      let point: Candidate | undefined;
      let sawRoot = false;
      return {
        open(name, _attributes, line) {
          if (!sawRoot) {
            sawRoot = true;
            if (name !== 'TrainingCenterDatabase')
              out.push(refused(`line ${line}`, `the root element is ${name}, not TrainingCenterDatabase`));
          }
          if (name === 'Trackpoint')
            point = {
              at: `Trackpoint ${++points} (line ${line})`,
              latitude: undefined,
              longitude: undefined,
              time: undefined,
            };
        },
        close(name, own) {
          if (!point) return;
          if (name === 'Trackpoint') {
            if (point.latitude !== undefined || point.longitude !== undefined) out.push(found(point));
            point = undefined;
            return;
          }
          const field = Object.hasOwn(FIELDS, name) ? FIELDS[name] : undefined;
          if (field && own.trim() !== '') (point as unknown as Record<string, unknown>)[field] = own.trim();
        },
      };
    },
  );
