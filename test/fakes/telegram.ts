import { json, parseJson, startFakeServer, type FakeServer } from './http-fake.js';

export interface TelegramMessage {
  chat_id: string | number;
  text: string;
  parse_mode?: string;
}

export interface FakeTelegram extends FakeServer {
  /** The bot's token: requests to /bot<other>/… answer 401 as Telegram does. */
  token: string;
  /** Chats the bot can write to (as strings); others answer 400 "chat not found". */
  chats: Set<string>;
  messages: TelegramMessage[];
  /** Answers the next `count` sendMessage calls 429 with `parameters.retry_after` (Telegram's flood control). */
  floodNext(count: number, retryAfterSeconds: number): void;
}

/**
 * The Telegram Bot API's `sendMessage` (POST /bot<token>/sendMessage, JSON `{ chat_id, text, parse_mode }`): answers
 * `{ ok: true, result: Message }` or `{ ok: false, error_code, description[, parameters] }` as Telegram does.
 */
export async function startFakeTelegram(token: string, chats: (string | number)[]): Promise<FakeTelegram> {
  const messages: TelegramMessage[] = [];
  const known = new Set(chats.map(String));
  let nextId = 1;
  const error = (code: number, description: string, parameters?: object) => ({
    ok: false,
    error_code: code,
    description,
    ...(parameters ? { parameters } : {}),
  });
  const server = await startFakeServer(
    (request, body, response) => {
      const match = /^\/bot([^/]+)\/(\w+)$/.exec(new URL(request.url ?? '/', 'http://localhost').pathname);
      if (!match) return json(response, 404, error(404, 'Not Found'));
      if (match[1] !== token) return json(response, 401, error(401, 'Unauthorized'));
      if (match[2] !== 'sendMessage') return json(response, 404, error(404, 'Not Found: method not found'));
      const sent = parseJson(body);
      if (!sent || (typeof sent.chat_id !== 'string' && typeof sent.chat_id !== 'number'))
        return json(response, 400, error(400, 'Bad Request: chat_id is empty'));
      if (typeof sent.text !== 'string' || sent.text === '')
        return json(response, 400, error(400, 'Bad Request: message text is empty'));
      if (!known.has(String(sent.chat_id))) return json(response, 400, error(400, 'Bad Request: chat not found'));
      messages.push({
        chat_id: sent.chat_id,
        text: sent.text,
        ...(typeof sent.parse_mode === 'string' ? { parse_mode: sent.parse_mode } : {}),
      });
      json(response, 200, {
        ok: true,
        result: { message_id: nextId++, date: 0, chat: { id: sent.chat_id, type: 'private' }, text: sent.text },
      });
    },
    { status: 500, body: JSON.stringify(error(500, 'Internal Server Error')) },
  );
  return Object.assign(server, {
    token,
    chats: known,
    messages,
    floodNext(count: number, retryAfterSeconds: number) {
      server.failNext(count, {
        status: 429,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(
          error(429, `Too Many Requests: retry after ${retryAfterSeconds}`, { retry_after: retryAfterSeconds }),
        ),
      });
    },
  });
}
