import type { IncomingHttpHeaders } from 'node:http';
import { Webhook } from 'standardwebhooks';
import { startFakeServer, type FakeServer } from './http-fake.js';

export interface ReceivedWebhook {
  /** `webhook-id`: the same on each retry of one delivery. */
  id: string;
  timestamp: number;
  /** The body as the reference verifier parsed it. */
  payload: unknown;
  headers: IncomingHttpHeaders;
}

export interface FakeWebhookReceiver extends FakeServer {
  /** The signing secret the receiver verifies with (`whsec_…`); the sender must sign with the same. */
  secret: string;
  /** Requests whose signature verified, in arrival order. */
  received: ReceivedWebhook[];
  /** Requests the reference verifier refused, with its reason. */
  rejected: { reason: string; headers: IncomingHttpHeaders }[];
}

/**
 * A webhook endpoint that checks each request as the Standard Webhooks reference library does
 * (`new Webhook(secret).verify(body, headers)`: signature over id, timestamp and body, timestamp within 5 minutes of
 * the wall clock) and answers 204, or 400 with the verifier's message.
 */
export async function startFakeWebhookReceiver(secret: string): Promise<FakeWebhookReceiver> {
  const verifier = new Webhook(secret);
  const received: ReceivedWebhook[] = [];
  const rejected: FakeWebhookReceiver['rejected'] = [];
  const server = await startFakeServer((request, body, response) => {
    const headers = Object.fromEntries(
      Object.entries(request.headers).map(([name, value]) => [
        name,
        Array.isArray(value) ? value.join(', ') : (value ?? ''),
      ]),
    );
    try {
      const payload = verifier.verify(body.toString('utf8'), headers);
      received.push({
        id: headers['webhook-id']!,
        timestamp: Number(headers['webhook-timestamp']),
        payload,
        headers: request.headers,
      });
      response.writeHead(204).end();
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      rejected.push({ reason, headers: request.headers });
      response.writeHead(400, { 'content-type': 'text/plain' }).end(reason);
    }
  });
  return Object.assign(server, { secret, received, rejected });
}
