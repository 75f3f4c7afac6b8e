import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { PageStart, RowKey } from '../db/page.js';
import { LimitParam, offsetOf, pageEnvelope, requestUrl, totalPagesOf } from './envelopes.js';
import { RequestErrors } from './errors.js';

/**
 * Keyset (cursor) pages beside numbered ones, for lists ordered by (time, id). A page's `next` link carries
 * a cursor, `after`: the key of the page's last row and the page's number, base64url-encoded. The next
 * page is then the rows past that key, a range of the list's index with no OFFSET, so a client that
 * follows next links pays the same for page 100,000 as for page 2, and sees each row once even when rows
 * share a time. Numbered pages (`page`) keep working; `first`, `prev` and `last` are numbered.
 */

/** `page`, `limit` and `after` query parameters; `page` is 1 when neither it nor `after` is given. */
export const KeysetPageQuery = (defaultLimit: number) =>
  Type.Object({
    page: Type.Optional(
      Type.Integer({ minimum: 1, description: 'Page number, from 1 (default 1). Not together with after' }),
    ),
    limit: LimitParam(defaultLimit),
    after: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description:
          "A cursor: answers the page after the one it ended. Every page's next link carries one; following next " +
          'links reads each page as an index range, without skipping rows by offset. Not together with page',
      }),
    ),
  });

/** The page a request asks for: a number, and the key it continues after when it came with a cursor. */
export interface KeysetPage {
  list: string;
  page: number;
  limit: number;
  after?: RowKey;
}

const BASE64URL = /^[A-Za-z0-9_-]+$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const MAX_TIME_MS = 8.64e15;

function encodeCursor(list: string, key: RowKey, page: number): string {
  return Buffer.from(JSON.stringify([list, key.at.getTime(), key.id, page])).toString('base64url');
}

/**
 * The key and page a cursor of `list` holds; undefined for anything this service did not write for that
 * list (a cursor of one list continues no other: their orders differ). Times are kept to the millisecond,
 * as JavaScript has them; a check constraint keeps stored point times to the millisecond (migration 0022),
 * so the key is exact.
 */
function decodeCursor(list: string, text: string): { key: RowKey; page: number } | undefined {
  if (!BASE64URL.test(text)) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (!Array.isArray(value) || value.length !== 4 || value[0] !== list) return undefined;
  const [, ms, id, page] = value as unknown[];
  if (!Number.isSafeInteger(ms) || (ms as number) < 0 || (ms as number) > MAX_TIME_MS) return undefined;
  if (typeof id !== 'string' || !UUID.test(id)) return undefined;
  if (!Number.isSafeInteger(page) || (page as number) < 1 || (page as number) >= Number.MAX_SAFE_INTEGER)
    return undefined;
  return { key: { at: new Date(ms as number), id }, page: page as number };
}

/**
 * The page a `KeysetPageQuery` of `list` (a name for the list and its order, e.g. `trip:<id>`) asks for;
 * 400 naming the field for `page` with `after`, or a cursor that is malformed or of another list.
 * `kind` names the fields as the caller's interface does (GraphQL has arguments).
 */
export function keysetPageOf(
  list: string,
  query: { page?: number; limit: number; after?: string },
  kind: 'Query parameter' | 'Argument' = 'Query parameter',
): KeysetPage {
  if (query.after === undefined) return { list, page: query.page ?? 1, limit: query.limit };
  if (query.page !== undefined) throw RequestErrors.validation(`${kind} 'after' cannot be combined with 'page'`);
  const cursor = decodeCursor(list, query.after);
  if (!cursor) throw RequestErrors.validation(`${kind} 'after' is not a valid cursor; take it from a page's next link`);
  return { list, page: cursor.page + 1, limit: query.limit, after: cursor.key };
}

/** The cursor of the page after this one, when rows follow it (`more`, read as one row past the limit). */
export function nextCursor<T>(
  found: { rows: T[]; more: boolean },
  { list, page }: KeysetPage,
  keyOf: (row: T) => RowKey,
): string | undefined {
  const last = found.rows.at(-1);
  return found.more && last !== undefined ? encodeCursor(list, keyOf(last), page) : undefined;
}

/** Where the page starts in SQL. */
export const startOf = (page: KeysetPage): PageStart =>
  page.after ? { after: page.after } : { offset: offsetOf(page) };

/**
 * `{ data, pagination, _links }` of a keyset page. `more` says whether rows follow the page (read as one
 * row past the limit), so `next` is there exactly when a next page is, whatever the total; it carries the
 * cursor of the page's last row. A page asked for by cursor links to itself by that cursor; the other
 * links are numbered.
 */
export function keysetPaginated<T>(
  request: FastifyRequest,
  found: { rows: T[]; more: boolean; total: number },
  page: KeysetPage,
  keyOf: (row: T) => RowKey,
) {
  const { limit } = page;
  const numbered = (n: number) => requestUrl(request, { page: String(n), limit: String(limit), after: undefined });
  const next = nextCursor(found, page, keyOf);
  return pageEnvelope(
    found.rows,
    { page: page.page, limit, total: found.total, total_pages: totalPagesOf(found.total, limit) },
    numbered,
    next && requestUrl(request, { page: undefined, limit: String(limit), after: next }),
    // A cursor page's own URL keeps its cursor (`page` cannot be there with it).
    page.after ? requestUrl(request, { limit: String(limit) }) : numbered(page.page),
  );
}
