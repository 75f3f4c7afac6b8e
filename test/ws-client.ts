import WebSocket from 'ws';

export type WsMessage = Record<string, unknown> & { type: string };

/** A real WebSocket client for tests: everything received is kept, `next` takes messages in order. */
export interface TestSocket {
  socket: WebSocket;
  /** The next message of this type not yet taken (waiting up to `timeoutMs` for it). */
  next(type: string, timeoutMs?: number): Promise<WsMessage>;
  /** Messages received and not yet taken. */
  pending(): WsMessage[];
  send(message: object): void;
  /** Sends and waits for the answer of the given type. */
  request(message: object, answer: string): Promise<WsMessage>;
  closed: Promise<{ code: number; reason: string }>;
  close(): void;
}

export interface SocketOptions {
  headers?: Record<string, string>;
  protocols?: string[];
  path?: string;
}

const wsUrl = (base: string, path = '/v1/ws') => base.replace(/^http/, 'ws') + path;

export function openSocket(base: string, options: SocketOptions = {}): Promise<TestSocket> {
  const socket = new WebSocket(wsUrl(base, options.path), options.protocols ?? [], { headers: options.headers });
  const inbox: WsMessage[] = [];
  const waiters = new Set<() => void>();
  socket.on('message', (data) => {
    inbox.push(JSON.parse(data.toString()) as WsMessage);
    for (const wake of waiters) wake();
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    socket.on('close', (code, reason) => {
      resolve({ code, reason: reason.toString() });
      for (const wake of waiters) wake();
    });
  });

  function take(type: string): WsMessage | undefined {
    const at = inbox.findIndex((message) => message.type === type);
    return at < 0 ? undefined : inbox.splice(at, 1)[0];
  }

  const next = (type: string, timeoutMs = 5000) =>
    new Promise<WsMessage>((resolve, reject) => {
      const check = () => {
        const found = take(type);
        if (found) {
          done();
          resolve(found);
        } else if (socket.readyState === WebSocket.CLOSED) {
          done();
          reject(new Error(`socket closed while waiting for ${type}; pending: ${JSON.stringify(inbox)}`));
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`no ${type} within ${timeoutMs} ms; pending: ${JSON.stringify(inbox)}`));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        waiters.delete(check);
      };
      waiters.add(check);
      check();
    });

  const client: TestSocket = {
    socket,
    next,
    pending: () => [...inbox],
    send: (message) => socket.send(JSON.stringify(message)),
    request: (message, answer) => {
      client.send(message);
      return next(answer);
    },
    closed,
    close: () => socket.close(),
  };
  return new Promise((resolve, reject) => {
    socket.once('open', () => resolve(client));
    socket.once('error', reject);
    socket.once('unexpected-response', (_request, response) => {
      reject(new Error(`handshake refused: ${response.statusCode}`));
      response.resume();
    });
  });
}

/** Opens a socket that the server is expected to refuse: the HTTP status and JSON body of its answer. */
export function refusedHandshake(
  base: string,
  options: SocketOptions = {},
): Promise<{ status: number; body: unknown }> {
  const socket = new WebSocket(wsUrl(base, options.path), options.protocols ?? [], { headers: options.headers });
  return new Promise((resolve, reject) => {
    socket.once('open', () => {
      socket.close();
      reject(new Error('the handshake was accepted'));
    });
    socket.once('unexpected-response', (_request, response) => {
      let text = '';
      response.on('data', (chunk: Buffer) => (text += chunk.toString()));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text ? JSON.parse(text) : null }));
    });
    socket.once('error', () => {});
  });
}

/** Opens a socket as the holder of this bearer token and waits for its Welcome. */
export async function socketAs(base: string, token: string): Promise<TestSocket> {
  const socket = await openSocket(base, { headers: { authorization: `Bearer ${token}` } });
  await socket.next('Welcome');
  return socket;
}
