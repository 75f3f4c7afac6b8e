import { json, parseJson, startFakeServer, type FakeServer } from './http-fake.js';

export interface GotifyMessage {
  title?: string;
  message: string;
  priority?: number;
  extras?: Record<string, unknown>;
  /** The application token it came with. */
  token: string;
}

export interface FakeGotify extends FakeServer {
  /** Application tokens the server accepts. */
  tokens: Set<string>;
  messages: GotifyMessage[];
}

const unauthorized = {
  error: 'Unauthorized',
  errorCode: 401,
  errorDescription: 'you need to provide a valid access token or user credentials to access this api',
};

/**
 * A Gotify server's `POST /message`: the app token in `X-Gotify-Key`, `?token=` or `Authorization: Bearer`;
 * `{ title, message, priority, extras }` with `message` required. Answers the stored message, or Gotify's errors.
 */
export async function startFakeGotify(tokens: string[]): Promise<FakeGotify> {
  const messages: GotifyMessage[] = [];
  const accepted = new Set(tokens);
  let nextId = 1;
  const server = await startFakeServer(
    (request, body, response) => {
      const url = new URL(request.url ?? '/', 'http://localhost');
      if (url.pathname !== '/message' || request.method !== 'POST')
        return json(response, 404, { error: 'Not Found', errorCode: 404, errorDescription: 'page not found' });
      const header = request.headers['x-gotify-key'];
      const token =
        (typeof header === 'string' ? header : undefined) ??
        url.searchParams.get('token') ??
        request.headers.authorization?.replace(/^Bearer /, '');
      if (!token || !accepted.has(token)) return json(response, 401, unauthorized);
      const sent = parseJson(body);
      if (!sent || typeof sent.message !== 'string' || sent.message === '')
        return json(response, 400, {
          error: 'Bad Request',
          errorCode: 400,
          errorDescription: "Field 'message' is required",
        });
      const message: GotifyMessage = {
        message: sent.message,
        token,
        ...(typeof sent.title === 'string' ? { title: sent.title } : {}),
        ...(typeof sent.priority === 'number' ? { priority: sent.priority } : {}),
        ...(sent.extras && typeof sent.extras === 'object' ? { extras: sent.extras as Record<string, unknown> } : {}),
      };
      messages.push(message);
      const { token: _token, ...stored } = message;
      json(response, 200, { id: nextId++, appid: 1, date: '2026-01-01T00:00:00Z', ...stored });
    },
    { status: 500, body: JSON.stringify({ error: 'Internal Server Error', errorCode: 500, errorDescription: 'boom' }) },
  );
  return Object.assign(server, { tokens: accepted, messages });
}
