// @ts-check
import { all, ApiError, del, get, patch, post } from './api.js';

/**
 * "Track this browser now": the browser as a tracker, writing through the same API as a phone. Its device ("This
 * browser", the user's own) reports with an API key that may only write GPS points (`gps:write_own`, or
 * `gps:write` for a holder of it, as Connect a device makes), and each position the Geolocation API reports
 * (watchPosition) is posted to POST /v1/gps with that key, not with the session.
 *
 * The key is kept in localStorage (`waygate.browser-tracker`, with its user and device) so that tracking again from
 * this browser reuses device and key instead of making a new key (and a "new API key" mail) each time; signing out
 * forgets it (session.js). A kept key that no longer works, or a device that lost it, gets a new key linked to the
 * same device, the device's old key revoked.
 */

const STORE_KEY = 'waygate.browser-tracker';

/** @typedef {{ userId: string, deviceId: string, keyId: string, key: string }} Kept */
/** @typedef {import('./types/routes').Schema<'Device'>} Device */
/** @typedef {import('./types/routes').Schema<'GpsPoint'>} GpsPoint */

/** @returns {Kept | null} */
function kept() {
  try {
    const value = JSON.parse(localStorage.getItem(STORE_KEY) ?? 'null');
    return value && typeof value.key === 'string' ? value : null;
  } catch {
    return null;
  }
}

/** Forgets the kept key (at sign-out: the next user of this browser must not find it). */
export const forgetBrowserTracker = () => localStorage.removeItem(STORE_KEY);

/**
 * The device and key this browser reports with: the kept ones while the device still holds that key; otherwise a
 * new key for the user's device of that name (its old key revoked), or a new device with a new key.
 * @param {{ userId: string, deviceName: string, scope: 'gps:write' | 'gps:write_own', password: () => { current_password?: string } }} options
 * @returns {Promise<{ device: Device, key: string }>}
 */
export async function browserDevice({ userId, deviceName, scope, password }) {
  const mine = kept();
  if (mine?.userId === userId) {
    const device = await get(`/v1/devices/${mine.deviceId}`).then(
      ({ data }) => data,
      () => null,
    );
    if (device?.api_key_id === mine.keyId) return { device, key: mine.key };
  }
  const devices = await all('/v1/devices');
  const existing =
    devices.find((device) => device.id === mine?.deviceId && device.owner_id === userId) ??
    devices.find((device) => device.name === deviceName && device.owner_id === userId);
  const made = await post('/v1/api-keys', {
    name: `Device: ${deviceName}`.slice(0, 100),
    scopes: [scope],
    ...password(),
  });
  let device;
  if (existing) {
    device = (await patch(`/v1/devices/${existing.id}`, { api_key_id: made.id })).data;
    // The device's old key would still write to it: revoked (it may be gone already, or not the user's to end).
    if (existing.api_key_id) await del(`/v1/api-keys/${existing.api_key_id}`).catch(() => {});
  } else device = (await post('/v1/devices', { name: deviceName, api_key_id: made.id, icon: 'person' })).data;
  localStorage.setItem(STORE_KEY, JSON.stringify({ userId, deviceId: device.id, keyId: made.id, key: made.key }));
  return { device, key: made.key };
}

/**
 * The body of POST /v1/gps for a position the browser reports: what it knows (accuracy always; altitude, heading
 * and speed when it has them), the speed 0 when it has none.
 * @param {GeolocationPosition} position
 * @returns {import('./types/routes').RequestBody<'post', '/v1/gps'>}
 */
export function pointOf({ coords, timestamp }) {
  const mps = coords.speed !== null && Number.isFinite(coords.speed) ? Math.max(0, coords.speed) : 0;
  const round = (/** @type {number} */ value) => Math.round(value * 100) / 100;
  return {
    latitude: coords.latitude,
    longitude: coords.longitude,
    accuracy: round(coords.accuracy),
    altitude: coords.altitude ?? null,
    // A heading is meaningless (NaN) while standing still.
    heading: coords.heading !== null && Number.isFinite(coords.heading) ? coords.heading % 360 : null,
    timestamp: Math.floor(timestamp / 1000),
    speed_mps: round(mps),
    speed_kmh: round(mps * 3.6),
    speed_mph: round(mps * 2.236936),
    speed_knots: round(mps * 1.943844),
  };
}

/**
 * Posts a point with the device's key (not the session: what the browser writes, the key may write).
 * @param {string} key
 * @param {import('./types/routes').RequestBody<'post', '/v1/gps'>} point
 * @returns {Promise<GpsPoint>}
 */
async function send(key, point) {
  const response = await fetch('/v1/gps', {
    method: 'POST',
    headers: { accept: 'application/json', 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify(point),
  });
  const body = await response.json().catch(() => undefined);
  if (!response.ok) throw new ApiError(response.status, body);
  return body.data;
}

/**
 * Watches this browser's position and posts each one with `key`, one request at a time (a position reported while
 * one is on its way waits, and only the newest waiting one is sent). `stop()` ends the watch.
 * @param {string} key
 * @param {{ onSent: (point: GpsPoint) => void, onError: (error: GeolocationPositionError | Error) => void }} handlers
 */
export function watchBrowser(key, { onSent, onError }) {
  /** @type {GeolocationPosition | null} */
  let waiting = null;
  let sending = false;
  let stopped = false;
  async function flush() {
    if (sending || !waiting || stopped) return;
    const position = waiting;
    waiting = null;
    sending = true;
    try {
      const point = await send(key, pointOf(position));
      if (!stopped) onSent(point);
    } catch (err) {
      if (!stopped) onError(err instanceof Error ? err : new Error(String(err)));
    } finally {
      sending = false;
      flush();
    }
  }
  const watch = navigator.geolocation.watchPosition(
    (position) => {
      waiting = position;
      flush();
    },
    (err) => {
      if (!stopped) onError(err);
    },
    // No timeout: a browser standing still may report nothing new for long, and that is no error.
    { enableHighAccuracy: true, maximumAge: 5000 },
  );
  return () => {
    stopped = true;
    navigator.geolocation.clearWatch(watch);
  };
}
