import type { Static } from 'typebox';
import type { GpsPoint as GpsPointSchema } from './schemas.js';

type GpsPoint = Static<typeof GpsPointSchema>;

/** A device shared with the user who posts, as OwnTracks shows a friend: its name and latest position. */
export interface Friend {
  id: string;
  name: string;
  latest: GpsPoint | null;
}

/** Two letters for the app's map marker: the initials of the device's first two words, else its first two letters. */
export function trackerId(name: string): string {
  const words = name.trim().split(/\s+/u).filter(Boolean);
  const letters =
    words.length > 1 ? `${[...words[0]!][0]}${[...words[1]!][0]}` : [...(words[0] ?? '')].slice(0, 2).join('');
  return letters.toUpperCase() || '??';
}

/**
 * The answer to an OwnTracks location post: a `card` (name, tracker id) and the latest `location` of each friend,
 * as OwnTracks Recorder answers (docs/gps.md, "OwnTracks friends"). The app tells friends apart by `topic`, so
 * each device gets a topic of its own; times are Unix seconds, speed km/h, as the app sends them.
 */
export function ownTracksFriendMessages(friends: readonly Friend[]): Record<string, unknown>[] {
  return friends.flatMap(({ id, name, latest }) => {
    const topic = `owntracks/waygate/${id}`;
    const tid = trackerId(name);
    const card = { _type: 'card', topic, tid, name };
    if (!latest) return [card];
    const location: Record<string, unknown> = {
      _type: 'location',
      topic,
      tid,
      lat: latest.latitude,
      lon: latest.longitude,
      tst: Math.floor(new Date(latest.timestamp).getTime() / 1000),
    };
    if (latest.accuracy != null) location.acc = Math.round(latest.accuracy);
    if (latest.altitude != null) location.alt = Math.round(latest.altitude);
    if (latest.speed_kmh != null) location.vel = Math.round(latest.speed_kmh);
    if (latest.heading != null) location.cog = Math.round(latest.heading);
    if (latest.battery_level != null) location.batt = Math.round(latest.battery_level);
    return [card, location];
  });
}
