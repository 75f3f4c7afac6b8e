import { found, refused, type Parsed } from './candidate.js';
import { linesOf } from './lines.js';

/**
 * OwnTracks Recorder .rec files: one message a line, "<ISO time>\t<tag>\t<JSON>". Location messages
 * (`_type: location`) are points: lat, lon, tst (epoch seconds), alt (m), vel (km/h), cog (degrees);
 * other messages (transitions, waypoints, lwt, status) are not positions and are passed over.
 */
export async function* parseOwnTracks(text: AsyncIterable<string>): AsyncGenerator<Parsed> {
  for await (const line of linesOf(text)) {
    const at = `line ${line.number}`;
    if ('tooLong' in line) {
      yield refused(at, 'line too long');
      continue;
    }
    if (line.text.trim() === '') continue;
    const json = line.text.slice(line.text.indexOf('{'));
    let message: unknown;
    try {
      message = line.text.includes('{') ? JSON.parse(json) : undefined;
    } catch {
      message = undefined;
    }
    if (typeof message !== 'object' || message === null || Array.isArray(message)) {
      yield refused(at, 'not "<time>\\t<tag>\\t<JSON message>"');
      continue;
    }
    const m = message as Record<string, unknown>;
    if (m._type !== 'location') continue;
    yield found({
      at,
      latitude: m.lat,
      longitude: m.lon,
      time: m.tst,
      altitude: m.alt,
      speed: typeof m.vel === 'number' ? m.vel / 3.6 : m.vel,
      heading: m.cog,
    });
  }
}
