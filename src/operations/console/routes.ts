import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import QRCode from 'qrcode';
import { requireAuthenticated } from '../../platform/auth/hooks.js';
import { errorResponses, publicBaseUrl } from '../../platform/http/envelopes.js';
import { RequestErrors } from '../../platform/http/errors.js';
import { messagePage, pageCsp, sendPage, TURNSTILE_ORIGIN } from '../../platform/http/html-page.js';
import type { ConsoleAssets } from './assets.js';
import { ConsoleErrors } from './errors.js';

export interface ConsoleOptions {
  assets: ConsoleAssets;
  /** MAP_TILE_URL: an `{z}/{x}/{y}` template (`{s}` for subdomains allowed). */
  tileUrl: string;
  tileAttribution: string;
  /** CONSOLE_STALE_AFTER_SECS: a device whose last point is older is marked stale. */
  staleAfterSecs: number;
  supportedLocales: string[];
  /** With bot protection on, the sign-in form shows Turnstile with this site key (and the CSP allows it). */
  turnstileSiteKey?: string | undefined;
  /** REGISTRATION_ENABLED: the sign-in page offers sign-up only while it (and the email platform's switches) allow it. */
  registrationEnabled?: boolean;
}

// Pages for people, not operations of the API: kept out of the OpenAPI document.
const hide = true;
const IMMUTABLE = 'public, max-age=31536000, immutable';
const AssetParams = Type.Object({ version: Type.String({ maxLength: 40 }), '*': Type.String({ maxLength: 200 }) });
const QrBody = Type.Object({ text: Type.String({ minLength: 1, maxLength: 2048 }) }, { additionalProperties: false });

/** The origin of a tile template for the CSP (`https://{s}.tile.example.org/…` becomes `https://*.tile.example.org`). */
export function tileSource(template: string): string {
  const match = /^(https?:\/\/)([^/]+)/.exec(template);
  if (!match) return '';
  return match[1] + match[2]!.replace(/^\{s\}\./, '*.').replace(/\{[a-z]+\}/g, '*');
}

/**
 * The console's Content-Security-Policy: scripts and styles from this origin only (no inline code or
 * style elements; Leaflet positions through the CSSOM, which CSP leaves alone), images from here and
 * the tile server, API and WebSocket calls to this origin, never framed. With bot protection on,
 * Turnstile's script and its frame from Cloudflare as well (the sources docs/console.md lists for Turnstile), no more.
 */
export function consoleCsp(tileUrl: string, turnstile = false): string {
  return [
    "default-src 'none'",
    turnstile ? `script-src 'self' ${TURNSTILE_ORIGIN}` : "script-src 'self'",
    "style-src 'self'",
    `img-src 'self' data: blob: ${tileSource(tileUrl)}`.trim(),
    "connect-src 'self'",
    "font-src 'self'",
    "manifest-src 'self'",
    ...(turnstile ? [`frame-src ${TURNSTILE_ORIGIN}`] : []),
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

const escapeJson = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c');

/**
 * The console page refused by its address's rate limit (the phones of a household behind one router, say):
 * a page a person reads, in the console's words for a 429 (German when the browser asks for it first),
 * instead of the API's JSON. Any other error goes on to the service's handler.
 */
function tooManyRequestsPage(assets: ConsoleAssets, locales: string[]) {
  const textOf = (locale: string) => {
    const file = assets.files.get(`i18n/${locale}.json`);
    return file
      ? (JSON.parse(file.body.toString('utf8')) as Record<string, string>)['error.tooManyRequests']
      : undefined;
  };
  const texts = new Map(
    locales.flatMap((locale) => {
      const text = textOf(locale);
      return text ? [[locale, text] as const] : [];
    }),
  );
  return (error: Error & { status?: number }, request: FastifyRequest, reply: FastifyReply) => {
    if (error.status !== 429) throw error;
    const asked = /^\s*([a-z]{2})/i.exec(request.headers['accept-language'] ?? '')?.[1]?.toLowerCase() ?? 'en';
    const locale = texts.has(asked) ? asked : 'en';
    const seconds = Math.max(1, Number(reply.getHeader('retry-after')) || 60);
    const message = (texts.get(locale) ?? 'Too many requests — try again in {seconds} seconds.').replace(
      '{seconds}',
      String(seconds),
    );
    return sendPage(
      reply.header('retry-after', String(seconds)),
      429,
      messagePage('Waygate', message, locale),
      pageCsp(),
    );
  };
}

/**
 * The built-in web console (docs/console.md): `/` leads to `/console/`, a page of static ES
 * modules that sign in through the public API and speak only to it with the user's session.
 */
export async function consoleRoutes(fastify: FastifyInstance, options: ConsoleOptions): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { assets } = options;
  const base = `/console/assets/${assets.version}`;
  const csp = consoleCsp(options.tileUrl, Boolean(options.turnstileSiteKey));
  const secure = (reply: FastifyReply) =>
    reply.header('x-content-type-options', 'nosniff').header('referrer-policy', 'no-referrer');

  app.get('/', { schema: { hide } }, async (_request, reply) => reply.redirect('/console/'));

  app.get(
    '/console/',
    { schema: { hide }, errorHandler: tooManyRequestsPage(assets, options.supportedLocales) },
    async (request, reply) => {
      const config = {
        tileUrl: options.tileUrl,
        tileAttribution: options.tileAttribution,
        staleAfterSecs: options.staleAfterSecs,
        locales: options.supportedLocales,
        publicUrl: publicBaseUrl(request),
        assets: base,
        turnstileSiteKey: options.turnstileSiteKey,
        registration: options.registrationEnabled ?? true,
      };
      const html = assets.index.replaceAll('{{ASSETS}}', base).replace('{{CONFIG}}', escapeJson(config));
      return secure(reply)
        .header('content-type', 'text/html; charset=utf-8')
        .header('content-security-policy', csp)
        .header('cache-control', 'no-cache')
        .header('x-frame-options', 'DENY')
        .send(html);
    },
  );

  app.get(
    '/console/assets/:version/*',
    { schema: { hide, params: AssetParams, response: errorResponses(ConsoleErrors.asset_not_found) } },
    async (request, reply) => {
      const file = request.params.version === assets.version ? assets.files.get(request.params['*']) : undefined;
      if (!file) throw ConsoleErrors.asset_not_found();
      if (request.headers['if-none-match'] === file.etag)
        return secure(reply).status(304).header('etag', file.etag).header('cache-control', IMMUTABLE).send();
      return secure(reply)
        .header('content-type', file.type)
        .header('etag', file.etag)
        .header('cache-control', IMMUTABLE)
        .send(file.body);
    },
  );

  // A QR code for what the signed-in user shows on screen (the OwnTracks configuration link). Made here,
  // where the qrcode package runs as it is, rather than shipping a bundled copy of it to the browser.
  app.post(
    '/console/qr',
    {
      config: { auth: requireAuthenticated() },
      schema: { hide, body: QrBody, response: errorResponses(RequestErrors.validation) },
    },
    async (request, reply) => {
      const svg = await QRCode.toString(request.body.text, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
      return secure(reply).header('content-type', 'image/svg+xml').header('cache-control', 'no-store').send(svg);
    },
  );
}
