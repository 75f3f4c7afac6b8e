import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeBotVerifier {
  url: string;
  /** Every verification request received, as decoded form fields. */
  requests: Record<string, string>[];
  close(): Promise<void>;
}

/**
 * A local stand-in for the bot-protection vendor's siteverify endpoint: it takes
 * the same form POST and answers `{ success }`, true only for the token 'human'.
 */
export async function startFakeBotVerifier(): Promise<FakeBotVerifier> {
  const requests: Record<string, string>[] = [];
  const server: Server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      const form = Object.fromEntries(new URLSearchParams(body));
      requests.push(form);
      response.setHeader('content-type', 'application/json');
      response.end(
        JSON.stringify({
          success: form.response === 'human',
          'error-codes': form.response === 'human' ? [] : ['invalid-input-response'],
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/turnstile/v0/siteverify`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
