import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { FastifyInstance } from 'fastify';

/**
 * GraphiQL at /v1/graphiql, every file served by the service itself from the npm packages (graphiql 4's
 * UMD build on React 18's UMD builds; React 19 ships none), so an install without internet access has
 * it too. The CSP lets the page load and call this origin only: no script, style or request leaves it.
 */

const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self' data:; " +
  "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const require = createRequire(import.meta.url);
const packageDir = (name: string) => dirname(require.resolve(`${name}/package.json`));

/** Starts GraphiQL on /v1/gql with the docs and history panes; a token goes into the Headers tab. */
const START = `'use strict';
const fetcher = GraphiQL.createFetcher({ url: new URL('gql', location.href).href });
ReactDOM.createRoot(document.getElementById('graphiql')).render(React.createElement(GraphiQL, { fetcher, shouldPersistHeaders: false }));
`;

const PAGE =
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">` +
  `<meta name="robots" content="noindex"><meta name="referrer" content="no-referrer"><title>GraphiQL · Waygate</title>` +
  `<link rel="stylesheet" href="graphiql/graphiql.css"><link rel="stylesheet" href="graphiql/page.css"></head>` +
  `<body><div id="graphiql"></div><script src="graphiql/react.js"></script><script src="graphiql/react-dom.js"></script>` +
  `<script src="graphiql/graphiql.js"></script><script src="graphiql/start.js"></script></body></html>`;

type Asset = { type: string; file?: string; text?: string };
const ASSETS: Record<string, Asset> = {
  'react.js': { type: 'text/javascript', file: join(packageDir('react'), 'umd/react.production.min.js') },
  'react-dom.js': { type: 'text/javascript', file: join(packageDir('react-dom'), 'umd/react-dom.production.min.js') },
  'graphiql.js': { type: 'text/javascript', file: join(packageDir('graphiql'), 'graphiql.min.js') },
  'graphiql.css': { type: 'text/css', file: join(packageDir('graphiql'), 'graphiql.min.css') },
  'page.css': { type: 'text/css', text: 'html,body,#graphiql{height:100%;margin:0}' },
  'start.js': { type: 'text/javascript', text: START },
};

export async function graphiqlRoutes(app: FastifyInstance): Promise<void> {
  // Read once, on first use (1.5 MB that most processes never send).
  const loaded = new Map<string, Buffer>();
  const contentOf = (name: string, asset: Asset): Buffer => {
    let content = loaded.get(name);
    if (!content) loaded.set(name, (content = asset.file ? readFileSync(asset.file) : Buffer.from(asset.text!)));
    return content;
  };

  app.get('/v1/graphiql', async (_request, reply) =>
    reply
      .type('text/html; charset=utf-8')
      .header('content-security-policy', CSP)
      .header('x-frame-options', 'DENY')
      .header('cache-control', 'no-cache')
      .send(PAGE),
  );

  app.get<{ Params: { file: string } }>('/v1/graphiql/:file', async (request, reply) => {
    const asset = Object.hasOwn(ASSETS, request.params.file) ? ASSETS[request.params.file] : undefined;
    if (!asset) return reply.callNotFound();
    return reply
      .type(`${asset.type}; charset=utf-8`)
      .header('x-content-type-options', 'nosniff')
      .header('cache-control', 'public, max-age=3600')
      .send(contentOf(request.params.file, asset));
  });
}
