// @ts-check
import { ApiError, post } from './api.js';

/**
 * Live points over the WebSocket (/v1/ws): a single-use ticket (POST /v1/ws/ticket) carried as the
 * subprotocol pair `service-ticket`, `<ticket>` (a browser cannot set headers on a WebSocket, and the
 * session token never goes into the URL), then Subscribe to `gps`. Reconnects with a growing pause;
 * `forceLogout` (signed out everywhere, banned) ends the console's session.
 * @param {{
 *   onPoint: (point: import('./types/routes').Schema<'GpsPoint'>) => void,
 *   onState: (state: 'live' | 'offline') => void,
 *   onSignedOut?: (reason: string) => void,
 * }} handlers
 */
export function openLive({ onPoint, onState, onSignedOut }) {
  /** @type {WebSocket | undefined} */
  let socket;
  let stopped = false;
  let attempt = 0;
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;

  async function connect() {
    if (stopped) return;
    let ticket;
    try {
      ({ ticket } = await post('/v1/ws/ticket'));
    } catch (err) {
      if (err instanceof ApiError && (err.status === 401 || err.status === 403)) return onState('offline');
      return retry();
    }
    if (stopped) return;
    const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
    const open = new WebSocket(`${scheme}://${location.host}/v1/ws`, ['service-ticket', ticket]);
    socket = open;
    socket.onmessage = (event) => {
      const message = JSON.parse(event.data);
      if (message.type === 'Welcome') open.send(JSON.stringify({ type: 'Subscribe', channel: 'gps' }));
      else if (message.type === 'Subscribed') {
        attempt = 0;
        onState('live');
      } else if (message.type === 'GpsPoint') onPoint(message.data);
      else if (message.type === 'forceLogout') {
        stopped = true;
        onSignedOut?.(message.reason);
      }
    };
    socket.onclose = () => {
      if (stopped) return;
      onState('offline');
      retry();
    };
  }

  function retry() {
    attempt += 1;
    timer = setTimeout(connect, Math.min(30_000, 500 * 2 ** Math.min(attempt, 6)));
  }

  connect();
  return () => {
    stopped = true;
    clearTimeout(timer);
    socket?.close(1000);
  };
}
