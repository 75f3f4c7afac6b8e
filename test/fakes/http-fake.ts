import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A failure a fake answers instead of its normal answer. */
export interface Failure {
  status: number;
  body: string;
  headers?: Record<string, string>;
}

/** What every fake of a notification service can be told to do: fail the next requests, or never answer. */
export interface FailOnDemand {
  /** Answers the next `count` requests with this failure (default 500 and a short text) instead of handling them. */
  failNext(count: number, failure?: Partial<Failure>): void;
  /** While true, requests get no answer at all (a timeout on the sender's side); they are still counted. */
  stalling: boolean;
  /** Requests that reached the fake, handled or not. */
  requestCount: number;
}

export interface FakeServer extends FailOnDemand {
  url: string;
  close(): Promise<void>;
}

/** At most this much of a request body is read; a larger one is answered 413, as real services do. */
const BODY_LIMIT = 64 * 1024;

/**
 * A real HTTP server on 127.0.0.1 (a free port) whose handler gets the whole body; failures queued by `failNext`
 * and `stalling` come first. `defaultFailure` is the fake's way of saying "broken" in its service's format.
 */
export async function startFakeServer(
  handle: (request: IncomingMessage, body: Buffer, response: ServerResponse) => void,
  defaultFailure: Failure = { status: 500, body: 'internal error' },
): Promise<FakeServer> {
  const queued: Failure[] = [];
  const server = createServer((request, response) => {
    fake.requestCount++;
    const chunks: Buffer[] = [];
    let length = 0;
    request.on('data', (chunk: Buffer) => {
      length += chunk.length;
      if (length <= BODY_LIMIT) chunks.push(chunk);
    });
    request.on('end', () => {
      if (fake.stalling) return;
      const failure = queued.shift();
      if (failure) return void response.writeHead(failure.status, failure.headers ?? {}).end(failure.body);
      if (length > BODY_LIMIT) return void response.writeHead(413).end('payload too large');
      handle(request, Buffer.concat(chunks), response);
    });
  });
  const fake: FakeServer = {
    url: '',
    stalling: false,
    requestCount: 0,
    failNext(count, failure = {}) {
      for (let i = 0; i < count; i++) queued.push({ ...defaultFailure, ...failure });
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return fake;
}

export function json(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

export function parseJson(body: Buffer): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(body.toString('utf8'));
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
