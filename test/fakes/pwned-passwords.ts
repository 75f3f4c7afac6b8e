import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakePwnedPasswords {
  /** Base URL, as PWNED_PASSWORDS_URL takes it (the part before /range/{prefix}). */
  url: string;
  /** Passwords the fake knows from breaches, with how often each was seen. */
  breached: Map<string, number>;
  /** Passwords whose suffix the fake sends as a padding line (count 0), as the real service may by chance. */
  padded: Set<string>;
  /** Each request's path and headers. */
  requests: { path: string; headers: IncomingHttpHeaders }[];
  /** 'ok' answers; 'hang' never answers (until closed); 'failing' answers 503. */
  mode: 'ok' | 'hang' | 'failing';
  close(): Promise<void>;
}

const sha1 = (password: string) => createHash('sha1').update(password, 'utf8').digest('hex').toUpperCase();

/**
 * A local stand-in for the Pwned Passwords range API (https://api.pwnedpasswords.com): GET /range/{5 hex}
 * answers `SUFFIX:COUNT` lines (35 upper-case hex characters, CRLF line ends) for every known hash under
 * that prefix; with `Add-Padding: true` it adds decoy lines of count 0, as the real service does.
 */
export async function startFakePwnedPasswords(): Promise<FakePwnedPasswords> {
  const fake: FakePwnedPasswords = {
    url: '',
    breached: new Map(),
    padded: new Set(),
    requests: [],
    mode: 'ok',
    close: async () => {},
  };
  const server = createServer((request, response) => {
    const path = request.url ?? '/';
    fake.requests.push({ path, headers: request.headers });
    if (fake.mode === 'hang') return;
    if (fake.mode === 'failing') {
      response.statusCode = 503;
      return response.end('Service Unavailable');
    }
    const prefix = /^\/range\/([0-9A-Fa-f]{5})$/.exec(path)?.[1]?.toUpperCase();
    if (!prefix) {
      response.statusCode = 400;
      return response.end('The hash prefix was not in a valid format');
    }
    const lines: string[] = [];
    for (const [password, count] of fake.breached)
      if (sha1(password).startsWith(prefix)) lines.push(`${sha1(password).slice(5)}:${count}`);
    if (request.headers['add-padding'] === 'true') {
      for (const password of fake.padded)
        if (sha1(password).startsWith(prefix)) lines.push(`${sha1(password).slice(5)}:0`);
      for (let i = 0; i < 20; i++) lines.push(`${randomBytes(18).toString('hex').slice(0, 35).toUpperCase()}:0`);
    }
    lines.sort();
    response.setHeader('content-type', 'text/plain');
    response.end(lines.join('\r\n'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.close = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return fake;
}
