import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import type { FastifyInstance, FastifyListenOptions } from 'fastify';

/**
 * Two apps seen as one, as a round-robin proxy in front of two nodes shows them: each `inject` goes to the
 * other node than the last, and `listen` starts both nodes and a small HTTP proxy at the address asked for
 * that sends each request (and each WebSocket upgrade) to the next node in turn. Everything else
 * (`services`, `database`, `log`, `hasRoute`, ...) is the first node's: a test that reads it reads one node.
 */
export function roundRobin(nodes: readonly [FastifyInstance, FastifyInstance]): FastifyInstance {
  let turn = 0;
  const next = () => nodes[turn++ % nodes.length]!;
  let proxy: RoundRobinProxy | undefined;
  const own: Partial<Record<keyof FastifyInstance, unknown>> = {
    inject: (...args: Parameters<FastifyInstance['inject']>) =>
      (next().inject as (...a: unknown[]) => unknown)(...args),
    listen: async (options: FastifyListenOptions = {}) => {
      const ports = await Promise.all(
        nodes.map(async (node) => new URL(await node.listen({ host: '127.0.0.1', port: 0 })).port),
      );
      proxy = await startProxy(ports.map(Number), options.host ?? 'localhost', options.port ?? 0);
      return proxy.url;
    },
    close: async () => {
      // The nodes first: they tell open WebSockets to go away (1001) through the proxy, which then drops the rest.
      await Promise.all(nodes.map((node) => node.close()));
      await proxy?.close();
    },
  };
  return new Proxy(nodes[0], {
    get(target, property, receiver) {
      if (property === 'server' && proxy) return proxy.server;
      if (Object.hasOwn(own, property)) return own[property as keyof FastifyInstance];
      const value = Reflect.get(target, property, receiver) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

interface RoundRobinProxy {
  url: string;
  server: Server;
  close(): Promise<void>;
}

/** An HTTP proxy sending each request, and each upgrade, to the next of `ports` on 127.0.0.1. */
async function startProxy(ports: number[], host: string, port: number): Promise<RoundRobinProxy> {
  let turn = 0;
  const nextPort = () => ports[turn++ % ports.length]!;
  const upgraded = new Set<Socket>();
  const server = createServer((incoming, answer) => {
    const forwarded = request(
      { host: '127.0.0.1', port: nextPort(), method: incoming.method, path: incoming.url, headers: incoming.headers },
      (reply) => {
        answer.writeHead(reply.statusCode!, reply.statusMessage, reply.rawHeaders);
        reply.pipe(answer);
      },
    );
    forwarded.on('error', () => answer.destroy());
    incoming.pipe(forwarded);
  });
  server.on('upgrade', (incoming: IncomingMessage, client: Socket, head: Buffer) => {
    const upstream = connect(nextPort(), '127.0.0.1', () => {
      upstream.write(requestHead(incoming));
      upstream.write(head);
      client.pipe(upstream).pipe(client);
    });
    for (const socket of [client, upstream]) {
      upgraded.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        upgraded.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, host, resolve));
  const address = server.address() as AddressInfo;
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${shown}:${address.port}`,
    server,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        for (const socket of upgraded) socket.destroy();
      }),
  };
}

/** The request line and headers of an upgrade request, as the client sent them. */
function requestHead(incoming: IncomingMessage): string {
  const lines = [`${incoming.method} ${incoming.url} HTTP/${incoming.httpVersion}`];
  for (let i = 0; i < incoming.rawHeaders.length; i += 2)
    lines.push(`${incoming.rawHeaders[i]}: ${incoming.rawHeaders[i + 1]}`);
  return `${lines.join('\r\n')}\r\n\r\n`;
}
