import { json, parseJson, startFakeServer, type FakeServer } from './http-fake.js';

export interface NtfyMessage {
  topic: string;
  title?: string;
  message: string;
  priority?: number;
  tags?: string[];
  click?: string;
  /** The Authorization header as received. */
  authorization?: string;
}

export interface FakeNtfy extends FakeServer {
  /** Published messages, in arrival order. */
  messages: NtfyMessage[];
  /** When set, every topic is protected: only `Authorization: Bearer <token>` may publish. */
  token?: string;
}

const TOPIC = /^[-_A-Za-z0-9]{1,64}$/;

/**
 * An ntfy server: publishing as JSON to `/` (`{ topic, message, title, priority, tags, click }`) or a plain body to
 * `/<topic>` with `Title`/`Priority`/`Tags`/`Click` headers. Answers the stored message as ntfy does, and ntfy's
 * errors: `{"code":40301,"http":403,"error":"forbidden"}` without a token, 40101 for a wrong one.
 */
export async function startFakeNtfy(): Promise<FakeNtfy> {
  const messages: NtfyMessage[] = [];
  let nextId = 1;
  const fail = (code: number, error: string) => ({ code, http: Math.floor(code / 100), error });
  const server = await startFakeServer(
    (request, body, response) => {
      const path = new URL(request.url ?? '/', 'http://localhost').pathname;
      if (request.method !== 'POST' && request.method !== 'PUT')
        return json(response, 405, fail(40501, 'method not allowed'));
      let message: NtfyMessage;
      if (path === '/') {
        const sent = parseJson(body);
        if (!sent || typeof sent.topic !== 'string')
          return json(response, 400, fail(40017, 'invalid request: JSON body expected'));
        message = {
          topic: sent.topic,
          message: typeof sent.message === 'string' ? sent.message : 'triggered',
          ...(typeof sent.title === 'string' ? { title: sent.title } : {}),
          ...(typeof sent.priority === 'number' ? { priority: sent.priority } : {}),
          ...(Array.isArray(sent.tags) ? { tags: sent.tags as string[] } : {}),
          ...(typeof sent.click === 'string' ? { click: sent.click } : {}),
        };
      } else {
        const header = (name: string) => request.headers[`x-${name}`] ?? request.headers[name];
        message = {
          topic: path.slice(1),
          message: body.toString('utf8'),
          ...(typeof header('title') === 'string' ? { title: header('title') as string } : {}),
          ...(header('priority') ? { priority: Number(header('priority')) } : {}),
          ...(typeof header('tags') === 'string' ? { tags: (header('tags') as string).split(',') } : {}),
          ...(typeof header('click') === 'string' ? { click: header('click') as string } : {}),
        };
      }
      if (!TOPIC.test(message.topic)) return json(response, 400, fail(40010, 'invalid request: invalid topic'));
      if (message.priority !== undefined && !(message.priority >= 1 && message.priority <= 5))
        return json(response, 400, fail(40007, 'invalid priority'));
      const authorization = request.headers.authorization;
      if (fake.token !== undefined) {
        if (!authorization) return json(response, 403, fail(40301, 'forbidden'));
        if (authorization !== `Bearer ${fake.token}`) return json(response, 401, fail(40101, 'unauthorized'));
      }
      messages.push({ ...message, ...(authorization ? { authorization } : {}) });
      json(response, 200, { id: `msg${nextId++}`, time: 0, event: 'message', ...message });
    },
    { status: 500, body: JSON.stringify({ code: 50001, http: 500, error: 'internal server error' }) },
  );
  const fake: FakeNtfy = Object.assign(server, { messages });
  return fake;
}
