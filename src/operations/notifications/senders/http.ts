import type { Clock } from '../../../platform/clock.js';
import type { SendOptions, SendResult } from './types.js';

/** The most of a far side's answer read (bytes) and kept in a result's detail (characters). */
export const READ_LIMIT = 4096;
export const DETAIL_LIMIT = 1000;
const DEFAULT_TIMEOUT_MS = 10_000;
const MAX_TIMEOUT_MS = 60_000;
const MAX_RETRY_AFTER_MS = 24 * 3600_000;
/** Redirects followed, each only a 307/308 (which keep method and body) to the same origin. */
const MAX_REDIRECTS = 3;

export interface Reply {
  status: number;
  headers: Headers;
  /** The start of the answer's body, at most READ_LIMIT bytes, decoded as UTF-8. */
  text: string;
}

export interface PostRequest {
  url: string;
  headers: Record<string, string>;
  body: string | Uint8Array;
}

/** A failure before or without an answer: nothing to retry when the configuration is at fault. */
export const failed = (detail: string, retryable = false): SendResult => ({
  ok: false,
  status: null,
  detail: bounded(detail),
  retryable,
});

/** Text from afar made safe to store and show: no control characters, at most DETAIL_LIMIT characters. */
export function bounded(text: string): string {
  const flat = text.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
  return flat.length > DETAIL_LIMIT ? `${flat.slice(0, DETAIL_LIMIT - 1)}…` : flat;
}

/**
 * POSTs once and reads the start of the answer. Never throws: a network error, a timeout (which covers reading the
 * answer too) or a refused redirect is a SendResult; an answer, whatever its status, is a Reply.
 */
export async function post(request: PostRequest, options: SendOptions): Promise<Reply | SendResult> {
  const timeoutMs = Math.min(Math.max(options.timeoutMs ?? DEFAULT_TIMEOUT_MS, 1), MAX_TIMEOUT_MS);
  const signal = AbortSignal.timeout(timeoutMs);
  const doFetch = options.fetch ?? fetch;
  const start = parseUrl(request.url);
  if (!start) return failed('the address is not a valid URL');
  let url: URL = start;
  try {
    for (let hop = 0; ; hop++) {
      if (url.protocol !== 'https:' && url.protocol !== 'http:') return failed('the address is not http(s)');
      const response = await doFetch(url, {
        method: 'POST',
        headers: request.headers,
        body: request.body,
        redirect: 'manual',
        signal,
      });
      if (response.status >= 300 && response.status < 400) {
        await response.body?.cancel();
        const location = response.headers.get('location');
        const next: URL | null = location ? parseUrl(location, url) : null;
        const followable = response.status === 307 || response.status === 308;
        if (next && followable && next.origin === url.origin && hop < MAX_REDIRECTS) {
          url = next;
          continue;
        }
        return {
          ok: false,
          status: response.status,
          detail: bounded(`redirected to ${next?.href ?? 'nowhere'}; not followed (only 307/308 within one origin)`),
          retryable: false,
        };
      }
      return { status: response.status, headers: response.headers, text: await readStart(response) };
    }
  } catch (error) {
    if (signal.aborted) return failed(`no answer within ${timeoutMs} ms`, true);
    return failed(`network error: ${describe(error)}`, true);
  }
}

function parseUrl(text: string, base?: URL): URL | null {
  try {
    return new URL(text, base);
  } catch {
    return null;
  }
}

export const isReply = (value: Reply | SendResult): value is Reply => !('ok' in value);

/** At most READ_LIMIT bytes of the body; the rest is left unread and the connection's stream cancelled. */
async function readStart(response: Response): Promise<string> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let length = 0;
  try {
    while (length < READ_LIMIT) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      length += value.byteLength;
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  return new TextDecoder().decode(Buffer.concat(chunks).subarray(0, READ_LIMIT));
}

function describe(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  if (cause?.code) return `${cause.code}${cause.message ? ` (${cause.message})` : ''}`;
  return error instanceof Error ? error.message : String(error);
}

/**
 * The usual reading of an answer: 2xx succeeded; 408, 429 and 5xx may succeed later (after Retry-After when given);
 * any other status is final. `detail` is what the far side said, or the status when it said nothing.
 */
export function resultOf(reply: Reply, clock: Clock, detail = reply.text): SendResult {
  const ok = reply.status >= 200 && reply.status < 300;
  const retryable = !ok && (reply.status >= 500 || reply.status === 408 || reply.status === 429);
  const retryAfterMs = retryable ? retryAfter(reply.headers.get('retry-after'), clock) : undefined;
  return {
    ok,
    status: reply.status,
    detail: bounded(detail) || `HTTP ${reply.status}`,
    retryable,
    ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
  };
}

/** Retry-After as seconds or as an HTTP date (RFC 9110 10.2.3), in milliseconds from now, capped at a day. */
export function retryAfter(value: string | null, clock: Clock): number | undefined {
  if (!value) return undefined;
  const ms = /^\d+$/.test(value.trim()) ? Number(value.trim()) * 1000 : Date.parse(value) - clock.nowMs();
  return Number.isFinite(ms) ? Math.min(Math.max(ms, 0), MAX_RETRY_AFTER_MS) : undefined;
}

export const clampRetryAfterMs = (ms: number) => Math.min(Math.max(ms, 0), MAX_RETRY_AFTER_MS);

/** Cuts a text to `max` characters, marking the cut. */
export function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
